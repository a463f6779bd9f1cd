/**
 * Every rule family, by the scenario section it reads. A new family is one module in this folder
 * plus one line here.
 */
import type { Rules } from '../scenario/native.js';
import { answerFamily } from './answer.js';
import { argumentsFamily } from './arguments.js';
import { efficiencyFamily } from './efficiency.js';
import { groundingFamily } from './grounding.js';
import { handoffsFamily } from './handoffs.js';
import { mcpFamily } from './mcp.js';
import { milestonesFamily } from './milestones.js';
import { orderFamily } from './order.js';
import { referenceFamily } from './reference.js';
import type { RuleFamily } from './rule.js';
import { safetyFamily } from './safety.js';
import { toolsFamily } from './tools.js';

/**
 * The families, in the order their results are reported: the answer first, as it is what the
 * user saw.
 */
export const FAMILIES: { [Section in keyof Rules]?: RuleFamily<NonNullable<Rules[Section]>> } = {
  answer: answerFamily,
  arguments: argumentsFamily,
  order: orderFamily,
  reference: referenceFamily,
  tools: toolsFamily,
  grounding: groundingFamily,
  safety: safetyFamily,
  mcp: mcpFamily,
  efficiency: efficiencyFamily,
  milestones: milestonesFamily,
  handoffs: handoffsFamily,
};
