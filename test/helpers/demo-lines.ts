/** What the demo prints on stdout, uninterrupted, in plain mode: the lines several tests hold it to. */
export const DEMO_PLAIN_LINES = [
  '[turn 1][save A] pending=read_notes',
  '[turn 1][save B]',
  '[turn 2][save A] pending=count_words',
  '[turn 2][save B]',
  '[turn 3][save A] pending=write_report',
  '[turn 3][save B]',
  '[done] Report written to report.txt, task complete.',
];
