/** The advice for a resume refused over ask_user alone: name --allow-questions. */
import { describe, expect, it } from 'vitest';
import { questionsAdvice } from '../../src/awaits/origin-advice.ts';

describe('questionsAdvice', () => {
  it('names --allow-questions when the run had ask_user and the resume has not', () => {
    expect(questionsAdvice({ tools: ['read_file', 'ask_user'] }, { tools: ['read_file'] })).toMatch(/resume it with --allow-questions .*not --allow-tool-change/);
  });
  it('says to leave the flag out when the run never had ask_user', () => {
    expect(questionsAdvice({ tools: ['read_file'] }, { tools: ['ask_user', 'read_file'] })).toMatch(/without --allow-questions/);
  });
  it('gives nothing when other tools differ too, or ask_user does not', () => {
    expect(questionsAdvice({ tools: ['read_file', 'ask_user'] }, { tools: ['write_file'] })).toBeNull();
    expect(questionsAdvice({ tools: ['read_file'] }, { tools: ['write_file'] })).toBeNull();
    expect(questionsAdvice({ tools: ['ask_user'] }, { tools: ['ask_user'] })).toBeNull();
  });
});
