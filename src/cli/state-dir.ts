/** Where a run keeps its state inside DIR. A module of its own so that readers (status, viz) need not load the runtime. */
export const STATE_DIR = '.durable-agent';
