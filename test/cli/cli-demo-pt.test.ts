/**
 * The demo in the lesson's Portuguese edition, as a user runs it: the real CLI in a child
 * process, killed by CRASH_AFTER and resumed, its lines held to the Portuguese lesson's line for
 * line; the language taken from --lang or from the locale; and, since the journal keeps no
 * language, a run started in one language resumed in the other.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KILL_TRANSCRIPT_PT = `[turn 1][save A] pending=read_notes
[turn 1][save B]
[turn 2][save A] pending=count_words
[turn 2][save B]
[turn 3][save A] pending=write_report
[kill] kill simulado em after-effect-write:3
`;

const RESUME_TRANSCRIPT_PT = `[resume] li turn=3 pending=write_report
[resume][reconcile] tool_use_id=toolu_03 name=write_report acerto no livro-razão, reusando o resultado, sem reexecutar
[turn 3][save B] resultado da ferramenta deste turno preenchido após a retomada
[done] Relatório escrito em report.txt, tarefa concluída.
`;

const KILL_TRANSCRIPT_EN = `[turn 1][save A] pending=read_notes
[turn 1][save B]
[turn 2][save A] pending=count_words
[turn 2][save B]
[turn 3][save A] pending=write_report
[kill] simulated kill at after-effect-write:3
`;

const RESUME_TRANSCRIPT_EN = `[resume] read turn=3 pending=write_report
[resume][reconcile] tool_use_id=toolu_03 name=write_report ledger hit, reusing result, not re-running
[turn 3][save B] filled in this turn's tool result after resume
[done] Report written to report.txt, task complete.
`;

/** The text the model receives for write_report when a resume cannot know whether it ran. */
const UNKNOWN_STATE_PT =
  'O estado de execução desta chamada write_report antes da retomada é desconhecido: não há entrada no livro-razão e, para evitar um efeito colateral duplicado, ela não foi reexecutada. Verifique você mesmo se ela se completou.';

function auditLines(dir: string): string[] {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

/** Killed after write_report's ledger entry, then resumed: both runs' output. */
function killAndResume(options: { kill: string[]; resume: string[]; env?: Record<string, string | undefined> }) {
  const cwd = tempDir();
  const killed = runCli(['demo', '--dir', 'D', ...options.kill], { cwd, env: { ...options.env, CRASH_AFTER: 'after-effect-write:3' } });
  const resumed = runCli(['demo', '--dir', 'D', '--resume', ...options.resume], { cwd, env: options.env });
  return { dir: path.join(cwd, 'D'), killed, resumed };
}

describe('the Portuguese lesson transcripts', () => {
  it('prints the kill run and the resume run of --lang pt line for line as the lesson does', () => {
    const { dir, killed, resumed } = killAndResume({ kill: ['--lang', 'pt'], resume: ['--lang', 'pt'] });
    expect(killed.stdout).toBe(KILL_TRANSCRIPT_PT);
    expect(killed.code).toBe(137);
    expect(killed.stderr).toBe('');
    expect(resumed.stdout).toBe(RESUME_TRANSCRIPT_PT);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toBe('');
    // The task and its tools are the lesson's in either language: one report, written once.
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('Highlights:');
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('speaks Portuguese without --lang when LANG is pt_BR.UTF-8', () => {
    const { killed, resumed } = killAndResume({ kill: [], resume: [], env: { LANG: 'pt_BR.UTF-8', LC_ALL: undefined, LC_MESSAGES: undefined } });
    expect([killed.stdout, killed.code]).toEqual([KILL_TRANSCRIPT_PT, 137]);
    expect([resumed.stdout, resumed.code]).toEqual([RESUME_TRANSCRIPT_PT, 0]);
  });

  it('takes the locale as any program does: LC_ALL first, then LC_MESSAGES, then LANG', () => {
    const doneLine = (env: Record<string, string | undefined>) => runCli(['demo'], { cwd: tempDir(), env }).stdout.trim().split('\n').at(-1);
    const PT_DONE = '[done] Relatório escrito em report.txt, tarefa concluída.';
    const EN_DONE = '[done] Report written to report.txt, task complete.';
    expect(doneLine({ LC_ALL: 'pt_PT', LC_MESSAGES: undefined, LANG: 'C.UTF-8' })).toBe(PT_DONE);
    expect(doneLine({ LC_ALL: undefined, LC_MESSAGES: 'pt_PT.UTF-8', LANG: 'en_US.UTF-8' })).toBe(PT_DONE);
    // LC_ALL=C says English, whatever LANG says; a language the lesson is not in is English too.
    expect(doneLine({ LC_ALL: 'C', LC_MESSAGES: undefined, LANG: 'pt_BR.UTF-8' })).toBe(EN_DONE);
    expect(doneLine({ LC_ALL: undefined, LC_MESSAGES: undefined, LANG: 'fr_FR.UTF-8' })).toBe(EN_DONE);
  });

  it('speaks English with --lang en although the locale is Portuguese', () => {
    const env = { LANG: 'pt_BR.UTF-8', LC_ALL: 'pt_BR.UTF-8' };
    const { killed, resumed } = killAndResume({ kill: ['--lang', 'en'], resume: ['--lang', 'en'], env });
    expect([killed.stdout, killed.code]).toEqual([KILL_TRANSCRIPT_EN, 137]);
    expect([resumed.stdout, resumed.code]).toEqual([RESUME_TRANSCRIPT_EN, 0]);
  });
});

describe('the journal keeps no language', () => {
  it('resumes in Portuguese a run started and killed in English', () => {
    const { dir, killed, resumed } = killAndResume({ kill: [], resume: ['--lang', 'pt'] });
    expect([killed.stdout, killed.code]).toEqual([KILL_TRANSCRIPT_EN, 137]);
    expect([resumed.stdout, resumed.code, resumed.stderr]).toEqual([RESUME_TRANSCRIPT_PT, 0, '']);
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('resumes in English a run started and killed in Portuguese, whose journal holds no Portuguese word', () => {
    const cwd = tempDir();
    const killed = runCli(['demo', '--dir', 'D', '--lang', 'pt'], { cwd, env: { CRASH_AFTER: 'after-effect-write:3' } });
    expect([killed.stdout, killed.code]).toEqual([KILL_TRANSCRIPT_PT, 137]);
    const journal = fs.readFileSync(path.join(cwd, 'D', '.durable-agent', 'journal.jsonl'), 'utf8');
    for (const word of ['livro-razão', 'simulado', 'retomada', 'Relatório']) expect(journal).not.toContain(word);
    const resumed = runCli(['demo', '--dir', 'D', '--resume', '--lang', 'en'], { cwd });
    expect([resumed.stdout, resumed.code, resumed.stderr]).toEqual([RESUME_TRANSCRIPT_EN, 0, '']);
  });
});

describe('the other reconcile branches, in Portuguese', () => {
  it('re-runs a read-only tool that has no ledger entry', () => {
    const dir = tempDir();
    const killed = runCli(['demo', '--lang', 'pt'], { cwd: dir, env: { CRASH_AFTER: 'after-tool-return:1' } });
    expect(killed.stdout).toBe('[turn 1][save A] pending=read_notes\n[kill] kill simulado em after-tool-return:1\n');
    expect(killed.code).toBe(137);
    const resumed = runCli(['demo', '--resume', '--lang', 'pt'], { cwd: dir });
    expect(resumed.stdout).toBe(
      '[resume] li turn=1 pending=read_notes\n' +
        '[resume][reconcile] tool_use_id=toolu_01 name=read_notes falha no livro-razão, ferramenta somente leitura, reexecutando\n' +
        '[turn 1][save B] resultado da ferramenta deste turno preenchido após a retomada\n' +
        '[turn 2][save A] pending=count_words\n[turn 2][save B]\n[turn 3][save A] pending=write_report\n[turn 3][save B]\n' +
        '[done] Relatório escrito em report.txt, tarefa concluída.\n',
    );
    expect(resumed.code).toBe(0);
  });

  it('reports an unknown side effect as is_error and hands the model the lesson\'s Portuguese text (--no-verify)', () => {
    const dir = tempDir();
    expect(runCli(['demo', '--lang', 'pt'], { cwd: dir, env: { CRASH_AFTER: 'after-tool-return:3' } }).code).toBe(137);
    const resumed = runCli(['demo', '--resume', '--no-verify', '--lang', 'pt'], { cwd: dir });
    expect(resumed.stdout).toBe(
      '[resume] li turn=3 pending=write_report\n' +
        '[resume][reconcile] tool_use_id=toolu_03 name=write_report falha no livro-razão com efeitos colaterais, indeterminável, anexando is_error\n' +
        '[turn 3][save B] resultado da ferramenta deste turno preenchido após a retomada\n' +
        `[done] Não consegui confirmar que report.txt foi escrito (${UNKNOWN_STATE_PT}). Verifique report.txt antes de executar a tarefa de novo.\n`,
    );
    expect(resumed.stderr).toBe('[resume][reconcile] toolu_03: não há entrada no livro-razão\n');
    expect(resumed.code).toBe(0);
    // What the model received, as the run's own transcript shows it: the lesson's sentence, as an error.
    const transcript = runCli(['history', '--transcript', '--full'], { cwd: dir }).stdout;
    expect(transcript).toContain(`error      write_report toolu_03: ${UNKNOWN_STATE_PT}\n`);
    // Written once, by the killed process, and not again.
    expect(auditLines(dir)).toHaveLength(1);
  });
});

describe('--lang refuses what it does not know', () => {
  it.each(['fr', 'PT', 'pt_BR', 'pt-BR'])('refuses --lang %j with a usage error (exit 2), before anything is written', (value) => {
    const dir = tempDir();
    const run = runCli(['demo', '--lang', value], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`--lang takes en or pt, not "${value}".`);
    expect(run.stderr).toContain('Without --lang the demo speaks the locale');
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
