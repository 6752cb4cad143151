/**
 * feed/ owns timelines: the strategies that materialize them (one file each, behind FeedBackend),
 * the fanout queue that fills them, and the services by purpose over them: reading timelines
 * (TimelineReading), publishing posts, deletes, likes and reposts (Publishing, PostDelivery), a
 * reader's relations (ReaderRelations: follows, mutes, blocks, filters), account removal, and the
 * repair of stalled work. It publishes every stored change to the change bus and knows nothing of
 * live/ or api/.
 */
export { createFeedBackend, type FeedBackendDependencies } from './strategies/index.js';
