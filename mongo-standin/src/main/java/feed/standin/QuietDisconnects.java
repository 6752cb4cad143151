package feed.standin;

import java.net.SocketException;
import java.util.Set;

import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;

/**
 * Closes a client's channel without a word when the client went away abruptly (a killed process, a driver that
 * resets pooled connections). The library's {@link MongoExceptionHandler} logs every exception with its stack trace
 * at ERROR, which made passing test runs print dozens of "Connection reset" traces. Any other exception still
 * reaches it and is logged.
 */
@ChannelHandler.Sharable
final class QuietDisconnects extends ChannelInboundHandlerAdapter {
    private static final String NAME = "mongo-standin-quiet-disconnects";
    private static final QuietDisconnects INSTANCE = new QuietDisconnects();
    /** What the JDK's socket reads and writes say when the peer is gone. */
    private static final Set<String> PEER_GONE = Set.of("Connection reset", "Connection reset by peer", "Broken pipe");

    private QuietDisconnects() {
    }

    /**
     * Puts the filter in front of the library's exception handler, once per channel. The library offers no hook when
     * it sets a channel up, so this runs on each message: a client that resets before sending anything is still
     * logged, which drivers never do (they open with a hello).
     */
    static void install(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        if (pipeline.get(NAME) != null) {
            return;
        }
        ChannelHandlerContext exceptionHandler = pipeline.context(MongoExceptionHandler.class);
        if (exceptionHandler != null) {
            pipeline.addBefore(exceptionHandler.name(), NAME, INSTANCE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof SocketException && PEER_GONE.contains(cause.getMessage())) {
            ctx.channel().close(); // what the library's handler does, minus the log line
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }
}
