export { startCtlSock, type CtlSock } from './server.js';
export { goJsonString } from './go-json-string.js';
export { answerRequest, encodeResponse, goJsonError, READ_BUF_SIZE, type CtlSockResponse, type PathTranslator } from './protocol.js';
export { sanitizePath, cleanPath } from './sanitize.js';
