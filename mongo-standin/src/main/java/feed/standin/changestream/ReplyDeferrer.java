package feed.standin.changestream;

import java.util.IdentityHashMap;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/**
 * Last handler of a client channel's pipeline, so the first one every outbound write passes: drops the
 * placeholder replies of parked getMores (remembering their headers) and forwards everything else.
 * Only used on its channel's event loop.
 */
final class ReplyDeferrer extends ChannelOutboundHandlerAdapter {
    static final String NAME = "mongo-standin-reply-deferrer";

    private final Map<Document, PendingGetMore> expected = new IdentityHashMap<>();

    void expect(PendingGetMore getMore) {
        expected.put(getMore.placeholder, getMore);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof MongoMessage message) {
            PendingGetMore getMore = expected.remove(message.getDocument());
            if (getMore != null) {
                promise.trySuccess();
                getMore.placeholderSwallowed(message.getHeader());
                return;
            }
        }
        ctx.write(msg, promise);
    }
}
