/** Where a run's state lives inside its directory (a module of its own: status and viz need only this name). */
export const STATE_DIR = '.durable-agent';
