/** The options that name a module of agent definitions, and one agent of it: worker, drill, replay. */
import { option } from './option.ts';

/** --agents FILE: a module whose exports made with defineAgent are its agents (loaded by plain node). */
export const agentsModule = option({
  key: 'agents',
  type: 'string',
  value: 'FILE',
  help: 'the module of agent definitions (its exports made with defineAgent), loaded by plain node',
});

/** --agent NAME: which agent of the module, when it has several. */
export const agentOfModule = option({ key: 'agent', type: 'string', value: 'NAME', help: 'which agent of the module (needed when it has several)' });
