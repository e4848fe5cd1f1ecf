/**
 * Anthropic-defined client tools, run by this package: the request names each by its API type
 * (Claude knows its description and input), its run() and verify() are ours.
 */
export { bashTool, type BashInput, type BashOptions, BASH_NAME, BASH_TYPE } from './bash.ts';
export { memoryTool, type MemoryInput, MEMORY_NAME, MEMORY_TYPE, MEMORIES_DIR } from './memory.ts';
export { textEditorTool, type TextEditorInput, type TextEditorOptions, TEXT_EDITOR_NAME, TEXT_EDITOR_TYPE } from './text-editor.ts';
