import { MemoryStore } from '../src/store/memory-store.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { benchRunOptions, benchScript } from './workload.ts';
for (const turns of [200, 1000, 1000, 1000]) {
  const script = benchScript(turns);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await startRun(benchRunOptions(new MemoryStore('m'), script));
  const c = process.cpuUsage(c0);
  console.log(turns, ((performance.now() - t0) / turns).toFixed(3), 'ms/turn wall', ((c.user + c.system) / 1000 / turns).toFixed(3), 'cpu');
}
