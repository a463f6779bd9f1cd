/**
 * The native `mcp` section: which MCP servers calls may go to, and approval before tools whose
 * MCP annotations say they are destructive. Judged by src/evaluate/mcp.ts; docs/scenarios.md
 * documents the keys.
 */
import { z } from 'zod';
import { toolName } from './assertions.js';
import { toolSet } from './native-matching.js';

/** A server as a scenario names it: its name, its address, or `address:port`. */
const serverName = z.string().min(1);

const serversSchema = z
  .strictObject({
    allowed: z.array(serverName).optional().meta({
      description:
        'Deny by default: a call to any other MCP server fails (always hard). A server is named by its name (mcp_data.server, mcp.server.name), its server.address, or address:port.',
    }),
    forbidden: z
      .array(serverName)
      .optional()
      .meta({ description: 'MCP servers no call may go to (always hard).' }),
  })
  .superRefine((servers, ctx) => {
    if (servers.allowed === undefined && servers.forbidden === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'give `allowed` (deny by default) or `forbidden` servers, or both',
      });
    servers.forbidden?.forEach((server, index) => {
      if (servers.allowed?.includes(server))
        ctx.addIssue({
          code: 'custom',
          message: `${server} is both allowed and forbidden; list it in one of them`,
          path: ['forbidden', index],
        });
    });
  });

/** A tool's MCP annotations as the scenario declares them (the MCP spec's hint names). */
export const toolAnnotationsSchema = z.strictObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

const annotationsSchema = z.strictObject({
  destructive: z.enum(['requireApproval']).meta({
    description:
      'requireApproval: each successful call of a tool whose annotations say destructiveHint: true needs an allow decision (or a successful `by` call) before it, as safety.approval (always hard).',
  }),
  by: toolSet.optional().meta({
    description:
      'Tools whose successful call, causally before, approves a destructive call (a confirmation asked of the user). Omitted: only allow decisions approve.',
  }),
  tools: z.record(toolName, toolAnnotationsSchema).optional().meta({
    description:
      "Per tool, its MCP annotations where the trace does not record them (or to correct them): the scenario's word wins over the trace's.",
  }),
});

/** The `mcp` section. */
export const mcpSectionSchema = z
  .strictObject({
    servers: serversSchema.optional(),
    annotations: annotationsSchema.optional(),
  })
  .superRefine((section, ctx) => {
    if (section.servers === undefined && section.annotations === undefined)
      ctx.addIssue({ code: 'custom', message: 'give `servers` or `annotations` (or both)' });
  });

export type McpSection = z.output<typeof mcpSectionSchema>;
