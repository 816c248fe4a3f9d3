declare module 'swagger-ui-dist/absolute-path.js' {
  export default function getAbsoluteFSPath(): string;
}
