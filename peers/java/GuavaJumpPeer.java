// Guava 31.1's Hashing.consistentHash (Debian libguava-java) as a ring-harness peer behind
// the process protocol (docs/guide/foreign-peers.md). Jump consistent hash takes 64-bit key
// hashes, not keys: the scenario sets input = "hashes", and the harness sends LOOKUP
// requests holding the key hashes of the recipe the peer routes like (our `jump`: xxh64).
//
// Build and run (offline, from the Debian jar):
//   javac -cp /usr/share/java/guava.jar -d OUT GuavaJumpPeer.java
//   java -cp OUT:/usr/share/java/guava.jar GuavaJumpPeer
//
// Guava steps a linear congruential generator and divides in double precision, where the
// Lamping-Veach paper's loop divides 2^31 by an integer; both are jump, and the tests check
// that every key lands in the same bucket. It takes no weights: BUILD refuses any but 1.
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import com.google.common.hash.Hashing;

public final class GuavaJumpPeer {
    private static final int FEATURE_LOOKUP = 1;
    private int buckets;

    private static ByteBuffer buffer(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private ByteBuffer answer(ByteBuffer request) {
        byte opcode = request.get();
        switch (opcode) {
            case 'H': {
                int version = request.getInt();
                byte[] name = "guava Hashing.consistentHash".getBytes(StandardCharsets.UTF_8);
                byte[] release = "31.1".getBytes(StandardCharsets.UTF_8);
                ByteBuffer out = buffer(16 + name.length + release.length);
                out.putInt(version).putInt(FEATURE_LOOKUP).putInt(name.length).put(name);
                return out.putInt(release.length).put(release);
            }
            case 'B': {
                buckets = request.getInt();
                for (int i = 0; i < buckets; i++) {
                    int nameLength = request.getInt();
                    request.position(request.position() + nameLength);  // the name, unused
                    double weight = request.getDouble();
                    if (weight != 1) {
                        throw new IllegalArgumentException("jump takes no weights (got " + weight + ")");
                    }
                }
                return buffer(8).putLong(-1);
            }
            case 'L': {
                int n = request.getInt();
                ByteBuffer out = buffer(4 + 2 * n).putInt(n);
                for (int i = 0; i < n; i++) {
                    out.putShort((short) Hashing.consistentHash(request.getLong(), buckets));
                }
                return out;
            }
            default:
                throw new IllegalArgumentException("unsupported request " + (char) opcode
                                                   + " (this peer is given key hashes: LOOKUP)");
        }
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 20));
        BufferedOutputStream out = new BufferedOutputStream(System.out, 1 << 20);
        GuavaJumpPeer peer = new GuavaJumpPeer();
        byte[] header = new byte[4];
        while (true) {
            try {
                in.readFully(header);
            } catch (EOFException end) {
                return;
            }
            byte[] body = new byte[ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt()];
            in.readFully(body);
            if (body.length > 0 && body[0] == 'Q') return;
            byte status = 'K';
            ByteBuffer payload;
            try {
                payload = peer.answer(ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN));
            } catch (RuntimeException error) {
                byte[] message = String.valueOf(error.getMessage()).getBytes(StandardCharsets.UTF_8);
                payload = buffer(4 + message.length).putInt(message.length).put(message);
                status = 'E';
            }
            out.write(buffer(4).putInt(1 + payload.position()).array());
            out.write(status);
            out.write(payload.array(), 0, payload.position());
            out.flush();
        }
    }
}
