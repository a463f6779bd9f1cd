/**
 * What the traces of `langgraph-agntcy-openllmetry/` in the real-world corpus must read as,
 * written from their raw spans: a LangChain supervisor whose `query_detector` call no tool span
 * records (its request and result are in the supervisor's chat spans; its body is ioa-observe's
 * `supervisor_agent.send_to_detector.agent`), and under that body, across A2A, the detector's
 * LangGraph run (`invoke_agent LangGraph` around `LangGraph.workflow`: one run) with its pyATS
 * MCP tools. OpenLLMetry's `execute_tool` spans record the arguments as LangChain's
 * `{input_str, tags, metadata, ...}`; the arguments read are the ones the model asked for.
 */
import { conversation, type ExpectedTrace, ok } from './corpus-reading-types.js';

export const AGNTCY_TRACES: ExpectedTrace[] = [
  {
    file: 'langgraph-agntcy-openllmetry/noc-get-inventory.otlp.json',
    traceId: '5edab84350c3da3b38a026540a681652',
    conversationId: 'packetpanic.supervisor_bbc6ca13-1267-47cd-849a-795ff50a7874',
    runs: [
      // No span of the supervisor is read as an agent run: its turns are the trace's.
      {
        spanId: '',
        turns: conversation([
          ['b33911a87194bf22', ['toolu_01UW7nyANTMrrg6xYJNawrHF']],
          ['8c7cedce9613157e', []],
        ]),
      },
      {
        spanId: 'cc6e504ee8047262',
        name: 'LangGraph',
        parentCall: 'toolu_01UW7nyANTMrrg6xYJNawrHF',
        turns: conversation([
          ['2c89ebdbd82e0db3', ['toolu_01YEtwd35Rf1ZdBQfFQXHiYY']],
          ['e394c29c193051ea', []],
        ]),
      },
    ],
    calls: {
      toolu_01UW7nyANTMrrg6xYJNawrHF: {
        tool: 'query_detector',
        args: {
          instruction:
            'Obtener el inventario completo de dispositivos de red, incluyendo nombre, tipo, modelo, dirección IP y estado de cada equipo.',
        },
        outcome: ok,
        result: { containing: ['INVENTARIO COMPLETO DE DISPOSITIVOS DE RED'] },
      },
      toolu_01YEtwd35Rf1ZdBQfFQXHiYY: {
        tool: 'pyats_list_devices',
        args: {},
        outcome: ok,
        result: { containing: ['ToolMessage', 'iosxe'] },
        agent: 'LangGraph',
      },
    },
    // The detector's call runs inside the supervisor's: neither is before the other.
    order: [],
  },
  {
    file: 'langgraph-agntcy-openllmetry/noc-interfaces-r1-status.otlp.json',
    traceId: 'affff7bb0994c3f16723bfb108b36304',
    conversationId: 'packetpanic.supervisor_61613c46-5963-4fcc-b849-e4a2d97edb71',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['ad627f78b1635c04', ['toolu_01CucxmpLU5gWBbP1iKRMyv8']],
          ['99bff853efb3466b', []],
        ]),
      },
      {
        spanId: '7d9744943ca8d1e0',
        name: 'LangGraph',
        parentCall: 'toolu_01CucxmpLU5gWBbP1iKRMyv8',
        turns: conversation([
          ['6913fa994c3af6a9', ['toolu_011AEReumsP97HL2ZbKDtLgZ']],
          [
            '6ed956dbd8b9e04a',
            [
              'toolu_01RhWsQTcwdW1A1FcEjXzEh2',
              'toolu_01DVBmUkmvincGDrpZsjTapF',
              'toolu_019EYrpZ5E6MAdKhSQrJZ3J3',
            ],
          ],
          ['2eef4f718c06dc4c', ['toolu_016zHyNhDcHX4FwoBaXpP1fB']],
          ['fdf5b429b8eb2923', []],
        ]),
      },
    ],
    calls: {
      toolu_01CucxmpLU5gWBbP1iKRMyv8: {
        tool: 'query_detector',
        args: {
          instruction:
            'Obtener el estado de todas las interfaces del equipo SW1, incluyendo estado operativo (up/down), estado administrativo, velocidad, errores y contadores relevantes.',
        },
        outcome: ok,
        result: { containing: ['ESTADO DE INTERFACES - SW1'] },
      },
      toolu_011AEReumsP97HL2ZbKDtLgZ: {
        tool: 'pyats_list_devices',
        args: {},
        outcome: ok,
        result: { containing: ['ToolMessage', 'iosxe'] },
        agent: 'LangGraph',
      },
      toolu_01RhWsQTcwdW1A1FcEjXzEh2: {
        tool: 'pyats_run_show_command',
        args: { device_name: 'SW1', command: 'show ip interface brief' },
        outcome: ok,
        result: { containing: ['show ip interface brief', 'IP-Address'] },
        agent: 'LangGraph',
      },
      // The tool ran and reported the device's error in its result: the span's status is OK.
      toolu_01DVBmUkmvincGDrpZsjTapF: {
        tool: 'pyats_run_show_command',
        args: { device_name: 'SW1', command: 'show interfaces' },
        outcome: ok,
        result: { containing: ['failed to connect to SW1'] },
        agent: 'LangGraph',
      },
      toolu_019EYrpZ5E6MAdKhSQrJZ3J3: {
        tool: 'pyats_run_show_command',
        args: { device_name: 'SW1', command: 'show interfaces status' },
        outcome: ok,
        result: { containing: ['show interfaces status', 'Failed to send the command'] },
        agent: 'LangGraph',
      },
      toolu_016zHyNhDcHX4FwoBaXpP1fB: {
        tool: 'pyats_run_show_command',
        args: { device_name: 'SW1', command: 'show interfaces' },
        outcome: ok,
        result: { containing: ['Ethernet0/0 is up'] },
        agent: 'LangGraph',
      },
    },
    order: [
      [
        ['toolu_011AEReumsP97HL2ZbKDtLgZ'],
        [
          'toolu_01RhWsQTcwdW1A1FcEjXzEh2',
          'toolu_01DVBmUkmvincGDrpZsjTapF',
          'toolu_019EYrpZ5E6MAdKhSQrJZ3J3',
        ],
        ['toolu_016zHyNhDcHX4FwoBaXpP1fB'],
      ],
    ],
  },
];
