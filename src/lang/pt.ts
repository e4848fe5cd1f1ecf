/**
 * The lesson in Portuguese, as its Portuguese edition prints it (the resume, the reconcile
 * phrases, checkpoint B after a resume, the kill, the unknown-state text, the done line); the
 * keys are English's (see lesson-words.ts), and a test fails when one table has a key the other lacks.
 */
import type { LessonWords } from './lesson-words.ts';

export const PT: LessonWords = {
  resumed: (turn, pending) => `[resume] li turn=${turn} pending=${pending.join(',') || 'nenhuma'}`,
  reconcile: {
    reused: 'acerto no livro-razão, reusando o resultado, sem reexecutar',
    're-ran-read-only': 'falha no livro-razão, ferramenta somente leitura, reexecutando',
    're-ran-idempotent': 'falha no livro-razão, ferramenta idempotente, reexecutando',
    'unknown-reported': 'falha no livro-razão com efeitos colaterais, indeterminável, anexando is_error',
    'verified-done': 'falha no livro-razão com efeitos colaterais, verificada como concluída, sem reexecutar',
    'verified-not-done-ran': 'falha no livro-razão com efeitos colaterais, verificada como não concluída, executando agora',
  },
  saveBAfterResume: (turn, results) =>
    `[turn ${turn}][save B] ${results > 1 ? 'resultados das ferramentas deste turno preenchidos' : 'resultado da ferramenta deste turno preenchido'} após a retomada`,
  kill: (label) => `[kill] kill simulado em ${label}`,
  // The tool_use_id is in the tool_result's own field; the lesson's sentence names the tool only.
  unknownState: (name, _id, why) =>
    `O estado de execução desta chamada ${name} antes da retomada é desconhecido: ${why} e, para evitar um efeito colateral duplicado, ` +
    'ela não foi reexecutada. Verifique você mesmo se ela se completou.',
  unknownWhy: {
    noRecord: 'não há entrada no livro-razão',
    toolGone: (name) => `a ferramenta ${name} não está disponível neste processo`,
    toolChanged: (name, change) => `a ferramenta ${name} mudou desde que esta chamada foi feita (${change}), então não foi chamada de novo com outro contrato`,
    cannotTell: (what) => `${what}, e não há entrada no livro-razão`,
  },
  verifiedDone: (name) => `${name} já tinha surtido efeito antes da retomada (confirmado por verificação); não foi executada de novo.`,
  demo: {
    done: 'Relatório escrito em report.txt, tarefa concluída.',
    notConfirmed: (file, result) => `Não consegui confirmar que ${file} foi escrito (${result}). Verifique ${file} antes de executar a tarefa de novo.`,
    notWritten: (file, result) => `Não escrevi ${file}: ${result}.`,
    followUp: (file, said) => `Você disse: ${said}. ${file} está escrito; este modelo roteirizado não tem nada a acrescentar.`,
  },
};
