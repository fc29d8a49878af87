/** The response envelope of SPEC §1, as tests read it. */
export interface Envelope<T = Record<string, unknown>> {
  code: string;
  message: string;
  data: T | null;
  request_id: string;
}

export async function envelope<T = Record<string, unknown>>(res: Response): Promise<Envelope<T>> {
  return (await res.json()) as Envelope<T>;
}
