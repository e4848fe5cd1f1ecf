/**
 * A figure for a design choice, never a target: what the number of write calls a turn costs.
 * Our store makes 6 writes and 2 fdatasyncs a one-call turn (4 record lines, and the commit mark
 * rewritten in place before each fdatasync); a journal that needs no mark could make 2 (the
 * records up to each fdatasync in one write). The same bytes of one of our durable runs are
 * written in each shape (raw-floor.ts: writeInShape), the shapes taking turns repetition after
 * repetition, and each shape's time is divided by the 2-write shape's of the same repetition.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fsyncDir } from '../src/util/durable-file.ts';
import { measureLoop } from './contenders.ts';
import { WRITE_SHAPES, type WriteShape, writeInShape } from './raw-floor.ts';
import { benchScript } from './workload.ts';

export interface WriteShapeFigure {
  shape: WriteShape;
  /** Medians over the repetitions, per turn. */
  msPerTurn: number;
  /** The process's CPU (user + system) per turn: what the calls cost apart from waiting for the disk. */
  cpuMsPerTurn: number;
  writesPerTurn: number;
  syncsPerTurn: number;
  /** This shape ÷ the 2-write shape: the median of each repetition's ratio (wall, then CPU). */
  overOnePerSync: number;
  cpuOverOnePerSync: number;
}

export interface WriteShapeFigures {
  turns: number;
  reps: number;
  rows: WriteShapeFigure[];
}

const LABELS: Record<WriteShape, string> = {
  ours: "ours: 4 record writes + 2 mark rewrites",
  lines: 'the raw floor: 4 record writes, no mark',
  'one-per-sync': 'proposed: 1 write per fdatasync, no mark',
};

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function measureWriteShapes(root: string, options: { turns?: number; reps?: number } = {}): Promise<WriteShapeFigures> {
  const turns = options.turns ?? 200;
  const reps = options.reps ?? 9;
  const source = path.join(root, 'write-shapes-source');
  const { floorPlan } = await measureLoop('durable', source, benchScript(turns));
  fs.rmSync(source, { recursive: true, force: true });
  if (!floorPlan) throw new Error('the durable run gave no floor plan');
  let files = 0;
  const once = (shape: WriteShape) => {
    const dir = path.join(root, `write-shape-${files++}`);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const counts = writeInShape(dir, floorPlan, shape);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    // Deleting a file leaves work that the next fsync would pay for: done now, untimed.
    fs.rmSync(dir, { recursive: true, force: true });
    fsyncDir(root);
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, ...counts };
  };
  for (const shape of WRITE_SHAPES) once(shape);
  const samples = new Map(WRITE_SHAPES.map((shape) => [shape, [] as Array<ReturnType<typeof once>>]));
  for (let rep = 0; rep < reps; rep++) {
    const shift = rep % WRITE_SHAPES.length;
    for (const shape of [...WRITE_SHAPES.slice(shift), ...WRITE_SHAPES.slice(0, shift)]) samples.get(shape)!.push(once(shape));
  }
  const base = samples.get('one-per-sync')!;
  return {
    turns,
    reps,
    rows: WRITE_SHAPES.map((shape) => {
      const runs = samples.get(shape)!;
      return {
        shape,
        msPerTurn: median(runs.map((run) => run.ms)) / turns,
        cpuMsPerTurn: median(runs.map((run) => run.cpuMs)) / turns,
        writesPerTurn: median(runs.map((run) => run.writes)) / turns,
        syncsPerTurn: median(runs.map((run) => run.syncs)) / turns,
        overOnePerSync: median(runs.map((run, rep) => run.ms / base[rep]!.ms)),
        cpuOverOnePerSync: median(runs.map((run, rep) => run.cpuMs / base[rep]!.cpuMs)),
      };
    }),
  };
}

export function writeShapeLines(figures: WriteShapeFigures): string[] {
  return [
    `Write calls a turn (a design figure): one of our T=${figures.turns} runs' bytes written in three shapes, ${figures.reps} repetitions taking turns, median (wall, and the process's CPU: the calls without the wait for the disk):`,
    ...figures.rows.map(
      (row) =>
        `  ${LABELS[row.shape].padEnd(44)} ${row.writesPerTurn.toFixed(2)} writes + ${row.syncsPerTurn.toFixed(2)} fdatasyncs a turn: ${row.msPerTurn.toFixed(3)} ms/turn (CPU ${row.cpuMsPerTurn.toFixed(3)}), ${row.overOnePerSync.toFixed(2)}× the 2-write shape (CPU ${row.cpuOverOnePerSync.toFixed(2)}×)`,
    ),
  ];
}
