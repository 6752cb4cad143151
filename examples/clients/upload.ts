/** An image as the API answers it: POST /media and `Post.media` alike. */
export interface Media {
  id: string;
  kind: 'IMAGE';
  alt: string | null;
  width: number;
  height: number;
  url: string;
  previewUrl: string;
  blurhash: string;
}

/** A refused upload: `code` is stable (PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, RATE_LIMITED, …), the message is for people. */
export class UploadError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds to wait before uploading again, after a 429. */
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
  }
}

/**
 * Uploads one image (JPEG, PNG, WebP or GIF) with optional alt text: a multipart POST to /media
 * beside /graphql, the same in Node 18+ and in browsers. In Node, `image` can be
 * `await fs.openAsBlob('photo.jpg')`; in a browser, a File from an <input type="file"> or a paste.
 */
export async function uploadImage(graphqlUrl: string, token: string, image: Blob, alt?: string): Promise<Media> {
  const form = new FormData();
  form.append('file', image, 'image');
  if (alt) form.append('alt', alt);
  const response = await fetch(new URL('/media', graphqlUrl), { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await response.json()) as Media | { errors: { message: string; extensions: { code: string } }[] };
  if ('errors' in body) {
    const error = body.errors[0]!;
    throw new UploadError(response.status, error.extensions.code, error.message, Number(response.headers.get('retry-after')) || null);
  }
  return body;
}

/** Posts up to four uploads, in this order; with images the text may be empty. */
export async function postImages(graphqlUrl: string, token: string, text: string, media: Media[]): Promise<{ id: string; media: Media[] }> {
  const response = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: 'mutation($text: String!, $media: [ID!]) { createPost(text: $text, media: $media) { id media { id kind alt width height url previewUrl blurhash } } }',
      variables: { text, media: media.map((image) => image.id) },
    }),
  });
  const body = (await response.json()) as { data?: { createPost: { id: string; media: Media[] } }; errors?: { message: string }[] };
  if (body.errors?.length || !body.data) throw new Error(body.errors?.[0]?.message ?? 'no answer');
  return body.data.createPost;
}
