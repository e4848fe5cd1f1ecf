/**
 * The console's page: one small HTML page whose script and style are served beside it
 * (/console.js, bundled by the build from page/, and /console.css: see page-assets.ts). The
 * script talks to the API with the token in a header, renders every text with textContent
 * (never as markup, so a tool result cannot become a script), and follows a run's records live
 * over a stream it reconnects with Last-Event-ID. Its icon is inline (a data: address, which the
 * Content-Security-Policy's img-src allows), so a browser asks the console for no /favicon.ico;
 * one that asks anyway (its JSON opened in a tab) gets the same icon there.
 */

/** A loop with its arrow, white on the console's blue. */
export const ICON_SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect width='32' height='32' rx='7' fill='#1d4ed8'/>" +
  "<path d='M22.5 11.5A8 8 0 1 0 24 16' fill='none' stroke='#fff' stroke-width='3.2' stroke-linecap='round'/>" +
  "<path d='M25.5 6.5v7h-7z' fill='#fff'/></svg>";
const ICON = `data:image/svg+xml,${encodeURIComponent(ICON_SVG)}`;

export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>durable-agent console</title>
<link rel="icon" type="image/svg+xml" href="${ICON}">
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
