/**
 * /favicon.ico, drawn here rather than committed as a binary: a 32×32 icon (one 32-bit BMP image in an ICO file, about
 * 4 KB), a white "L" on the docs' accent blue, its rounded corners smoothed by sampling each pixel 4×4 times.
 */
const SIZE = 32;
const ACCENT = [0x0b, 0x5f, 0xff];
const WHITE = [0xff, 0xff, 0xff];

/** Whether the point (x, y) lies in the rounded square that fills the icon. */
function inRoundedSquare(x: number, y: number, radius = 7): boolean {
  const dx = Math.max(radius - x, 0, x - (SIZE - radius));
  const dy = Math.max(radius - y, 0, y - (SIZE - radius));
  return dx * dx + dy * dy <= radius * radius;
}

const inLetter = (x: number, y: number) => (x >= 10 && x < 15 && y >= 7 && y < 25) || (x >= 10 && x < 23 && y >= 20 && y < 25);

function buildFavicon(): Buffer {
  const header = Buffer.alloc(6 + 16 + 40);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  const mask = Buffer.alloc(SIZE * 4); // the AND mask, all zero: the alpha channel decides
  header.writeUInt8(SIZE, 6);
  header.writeUInt8(SIZE, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(40 + pixels.length + mask.length, 14);
  header.writeUInt32LE(22, 18); // where the image starts
  header.writeUInt32LE(40, 22); // BITMAPINFOHEADER
  header.writeInt32LE(SIZE, 26);
  header.writeInt32LE(SIZE * 2, 30); // the colour image and its mask
  header.writeUInt16LE(1, 34);
  header.writeUInt16LE(32, 36);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      let covered = 0;
      for (let sy = 0; sy < 4; sy++) for (let sx = 0; sx < 4; sx++) covered += Number(inRoundedSquare(x + (sx + 0.5) / 4, y + (sy + 0.5) / 4));
      const [r, g, b] = inLetter(x, y) ? WHITE : ACCENT;
      const at = ((SIZE - 1 - y) * SIZE + x) * 4; // rows bottom-up, BGRA
      pixels.set([b, g, r, Math.round((covered / 16) * 255)], at);
    }
  }
  return Buffer.concat([header, pixels, mask]);
}

export const FAVICON_ICO = buildFavicon();
