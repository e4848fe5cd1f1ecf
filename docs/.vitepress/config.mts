import fs from 'node:fs';
import { type DefaultTheme, defineConfig } from 'vitepress';

// The API pages are written from the types by TypeDoc (npm run docs:api) before the site is built.
// Its sidebar names the entries only: each entry's page lists its members by kind. With every
// member listed too (about 180), each of the 447 pages carried 163 KB of sidebar and the site
// took twice as long to build.
const apiSidebar = (() => {
  const file = new URL('../api/typedoc-sidebar.json', import.meta.url);
  const entries = (items: DefaultTheme.SidebarItem[]): DefaultTheme.SidebarItem[] =>
    items.filter((item) => item.link).map((item) => ({ text: item.text, link: item.link, ...(item.items ? { items: entries(item.items) } : {}) }));
  return fs.existsSync(file) ? entries(JSON.parse(fs.readFileSync(file, 'utf8'))) : [];
})();

export default defineConfig({
  title: 'durable-agent',
  description: 'A durable agent loop: kill it anywhere, resume, nothing lost, nothing done twice.',
  // Every link between pages must lead somewhere: a dead one fails the build.
  ignoreDeadLinks: false,
  cleanUrls: true,
  lastUpdated: false,
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/getting-started' },
      { text: 'CLI', link: '/command-line' },
      { text: 'API', link: '/api/' },
    ],
    sidebar: {
      '/api/': [{ text: 'API reference', link: '/api/' }, ...apiSidebar],
      '/': [
        {
          text: 'Start',
          items: [
            { text: 'Getting started', link: '/getting-started' },
            { text: 'Começando (português)', link: '/pt/comecando' },
            { text: 'How it works', link: '/how-it-works' },
          ],
        },
        {
          text: 'Building an agent',
          items: [
            { text: 'Tools, reconcile and verify', link: '/programmatic-use' },
            { text: 'Running with a real model', link: '/real-model' },
            { text: 'MCP tools', link: '/mcp-tools' },
            { text: 'A person in the loop', link: '/approvals' },
            { text: 'Durable waits', link: '/waits' },
            { text: 'Sub-agents', link: '/sub-agents' },
            { text: 'Long runs and budgets', link: '/long-runs' },
            { text: 'Crash-testing your own agent', link: '/crash-testing' },
          ],
        },
        {
          text: 'Operating',
          items: [
            { text: 'Command line', link: '/command-line' },
            { text: 'The visualizer', link: '/visualizer' },
            { text: 'The console', link: '/console' },
            { text: 'An HTTP API (serve)', link: '/serve' },
            { text: 'The HTTP API client', link: '/client' },
            { text: 'Running a fleet', link: '/fleet' },
            { text: 'Schedules', link: '/schedules' },
            { text: 'Traces (OpenTelemetry)', link: '/traces' },
            { text: 'Encryption at rest', link: '/encryption' },
          ],
        },
        {
          text: 'Inside',
          items: [
            { text: 'How it is proved', link: '/how-it-is-proved' },
            { text: 'Performance', link: '/performance' },
            { text: 'Layout', link: '/layout' },
            { text: 'API reference', link: '/api/' },
          ],
        },
      ],
    },
    search: { provider: 'local' },
  },
});
