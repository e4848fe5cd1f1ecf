/** --tenant NAME: whose a run is (core/tenant.ts), for the commands that start, queue or list runs. */
import { option } from './option.ts';

export const tenant = option({
  key: 'tenant',
  type: 'string',
  value: 'NAME',
  help: "whose the run is: pinned in it, shown by list and status, inherited by its sub-agents' runs",
  defaultText: 'default',
  api: 'StartOptions.tenant',
});

export const tenantFilter = option({ key: 'tenant', type: 'string', value: 'NAME', help: "only the runs of this tenant ('default': those started without one)", api: 'ListOptions.tenant' });
