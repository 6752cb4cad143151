package feed.standin;

import java.net.SocketException;
import java.util.Set;

import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

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
     * Puts the filter at the front of every connection the server accepts, before the library's handlers are added
     * behind it: a connection reset before its first message is as quiet as any other.
     */
    static void installOnAccept(Channel serverChannel) {
        serverChannel.pipeline().addFirst(NAME, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object accepted) {
                if (accepted instanceof Channel connection) {
                    connection.pipeline().addFirst(NAME, INSTANCE);
                }
                ctx.fireChannelRead(accepted);
            }
        });
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
