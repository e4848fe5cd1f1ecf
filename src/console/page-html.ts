/**
 * The console's page: one small HTML page whose script and style are served beside it
 * (/console.js, bundled by the build from page/, and /console.css: see page-assets.ts). The
 * script talks to the API with the token in a header, renders every text with textContent
 * (never as markup, so a tool result cannot become a script), and follows a run's records live
 * over a stream it reconnects with Last-Event-ID.
 */

export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>durable-agent console</title>
<link rel="stylesheet" href="/console.css">
<script src="/console.js" defer></script>
</head>
<body>
<header class="console-top">
<h1><a href="/" data-nav>durable-agent console</a></h1>
<span id="who" class="dim"></span>
</header>
<main id="main"><p class="dim">Loading…</p></main>
</body>
</html>
`;
