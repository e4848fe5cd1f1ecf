/** `durable-agent token add|list|remove`: the tokens file (access/tokens-file.ts). */
import { addToken, listTokens, removeToken } from '../../access/tokens-file.ts';
import { tableLines } from '../../words/format.ts';
import type { TokenArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';

export function tokenCommand(args: TokenArgs, writers: Writers): number {
  if (args.action === 'add') {
    const { token, stored } = addToken(args.tokensFile, { name: args.name, role: args.role, tenant: args.tenant });
    const scope = stored.tenant === null ? 'every tenant' : `tenant ${stored.tenant}`;
    if (args.json) writers.out(JSON.stringify({ name: stored.name, role: stored.role, tenant: stored.tenant, token }));
    else writers.out(token);
    // The token on stdout alone (to be piped or copied); what it is on stderr.
    writers.err(`[token] ${stored.name}: ${stored.role === 'steer' ? 'sees and steers' : 'sees'} the runs of ${scope}. This is the only time the token is shown: ${args.tokensFile} keeps its hash only.`);
    return EXIT.done;
  }
  if (args.action === 'remove') {
    const gone = removeToken(args.tokensFile, args.name);
    writers.out(`${gone.name} removed: it stops working at its next request.`);
    return EXIT.done;
  }
  const tokens = listTokens(args.tokensFile);
  if (args.json) writers.out(JSON.stringify(tokens, null, 2));
  else for (const line of tableLines(['NAME', 'ROLE', 'TENANT'], tokens.map((token) => [token.name, token.role, token.tenant ?? '(every tenant)']))) writers.out(line);
  return EXIT.done;
}
