import type { TestApp } from './testApp.js';

export interface UploadAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** The server's origin, e.g. http://localhost:4567. */
export const originOf = (app: TestApp) => new URL(app.url).origin;

/** POST /media as a browser's FormData sends it: one part named "file" (any name and declared type), an optional "alt". */
export async function upload(
  app: TestApp,
  token: string | null,
  data: Buffer,
  options: { alt?: string; filename?: string; type?: string; part?: string } = {},
): Promise<UploadAnswer> {
  const form = new FormData();
  form.append(options.part ?? 'file', new Blob([new Uint8Array(data)], { type: options.type ?? 'image/jpeg' }), options.filename ?? 'photo.jpg');
  if (options.alt !== undefined) form.append('alt', options.alt);
  const response = await fetch(`${originOf(app)}/media`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: form,
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** An upload that must succeed: its id. */
export async function uploaded(app: TestApp, token: string, data: Buffer, alt?: string): Promise<string> {
  const answer = await upload(app, token, data, alt === undefined ? {} : { alt });
  if (answer.status !== 201) throw new Error(`upload failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

export const mediaFields = 'media { id kind alt width height url previewUrl blurhash }';
