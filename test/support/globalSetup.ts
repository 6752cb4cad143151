import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { startStandIn, type StandIn } from '../../src/db/standIn.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A MongoDB server: MONGODB_URI when set, otherwise the stand-in this setup started. */
    mongoServerUri: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { mongodbUri } = loadConfig();
  let standIn: StandIn | undefined;
  if (!mongodbUri) standIn = await startStandIn({ log: (line) => console.log(line) });
  project.provide('mongoServerUri', mongodbUri ?? standIn!.uri);
  return async () => {
    await standIn?.stop();
  };
}
