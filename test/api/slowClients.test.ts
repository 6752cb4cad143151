import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/** A client that sends its request body a byte at a time is cut off, like one that trickles its headers. */
describe('slow request bodies', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ REQUEST_TIMEOUT_SECONDS: '1' });
  });
  afterAll(() => app?.stop());

  it('closes the connection once REQUEST_TIMEOUT_SECONDS have passed without the whole body', async () => {
    const socket = connect(app.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ query: '{ viewer { handle } }' });
    socket.write(`POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < body.length - 1 && !socket.destroyed) socket.write(body[sent++]!);
    }, 200);
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(5000);
    expect(sent).toBeLessThan(body.length - 1); // cut off while still trickling
    expect(response).toMatch(/^HTTP\/1\.1 408/);
  });
});
