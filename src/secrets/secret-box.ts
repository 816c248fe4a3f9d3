// PLACEHOLDER (replaced by the i21-secrets branch)
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
export class SecretBox {
  constructor(private readonly key: Buffer) {}
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `enc:v1:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }
  open(sealed: string, context: string): string {
    const bytes = Buffer.from(sealed.slice(7), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12)).setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  }
}
