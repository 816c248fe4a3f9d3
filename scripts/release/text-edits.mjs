// The bundle's source map through the passes over esbuild's output (scripts/release/bundle.mjs): each pass is a list of
// text edits applied here, and the map's generated positions move with the text.
import { decode, encode } from '@jridgewell/sourcemap-codec';

/** Where each line of the text starts. */
function lineStarts(text) {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The index of the last entry of a sorted array that is at most `value`; -1 when there is none. */
function lastAtMost(sorted, value) {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] <= value) low = middle + 1;
    else high = middle - 1;
  }
  return high;
}

/**
 * Applies `edits`, each [start, end, replacement] in offsets of `code`, none overlapping another. With a source map
 * (version 3, of `code`), also returns that map for the new text: a position after an edit moves by what the edit
 * added or removed, one inside a replaced range moves to where its replacement starts.
 */
export function applyEdits(code, edits, map) {
  const sorted = [...edits].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const starts = [];
  const ends = [];
  const newStarts = [];
  const shifts = [];
  let out = '';
  let position = 0;
  let shift = 0;
  for (const [start, end, text] of sorted) {
    if (start < position) throw new Error(`text-edits: overlapping edits at ${start}`);
    out += code.slice(position, start);
    starts.push(start);
    ends.push(end);
    newStarts.push(out.length);
    out += text;
    shift += text.length - (end - start);
    shifts.push(shift);
    position = end;
  }
  out += code.slice(position);
  if (!map) return { code: out };

  const moved = (offset) => {
    const i = lastAtMost(starts, offset);
    if (i < 0) return offset;
    return offset < ends[i] ? newStarts[i] : offset + shifts[i];
  };
  const oldLines = lineStarts(code);
  const newLines = lineStarts(out);
  const lines = newLines.map(() => []);
  decode(map.mappings).forEach((segments, line) => {
    for (const segment of segments) {
      const offset = moved(oldLines[line] + segment[0]);
      const newLine = lastAtMost(newLines, offset);
      lines[newLine].push([offset - newLines[newLine], ...segment.slice(1)]);
    }
  });
  return { code: out, map: { ...map, mappings: encode(lines) } };
}

/**
 * The map with one mapping per original line, not per token, for the sources `coarse(source)` picks: a frame there
 * still names its file and line, and the column where that line's code starts.
 */
export function lineLevelMappings(map, coarse) {
  const isCoarse = map.sources.map((source) => coarse(source));
  const lines = decode(map.mappings).map((segments) => {
    let previous;
    return segments.filter((segment) => {
      if (segment.length < 4 || !isCoarse[segment[1]]) {
        previous = undefined;
        return true;
      }
      const key = `${segment[1]}:${segment[2]}`;
      if (key === previous) return false;
      previous = key;
      return true;
    });
  });
  return { ...map, mappings: encode(lines) };
}
