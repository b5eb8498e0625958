// spymemcached 2.12.3's KetamaNodeLocator (Debian libspymemcached-java) as a ring-harness
// peer behind the process protocol (docs/guide/foreign-peers.md).
//
// Build and run (offline, from the Debian jar):
//   javac -cp /usr/share/java/spymemcached.jar -d OUT SpymemcachedPeer.java
//   java -cp OUT:/usr/share/java/spymemcached.jar SpymemcachedPeer
//
// Servers are "ip:port" (literal addresses: a host name would be resolved). The locator is
// built with KETAMA_HASH and, when any weight differs from 1, the weights map: MD5 of
// "ip:port-<i>" (InetSocketAddress's text without its leading "/"), four little-endian
// points per digest, 40 digests per server at equal weights and a share of 40 x servers
// digests by weight otherwise; of equal points the server added last wins (a TreeMap); a
// key goes to the first point >= the first four bytes of its MD5, little-endian, wrapping.
// That is our `libketama` construction (tests/live/test_foreign_adapters.py checks it on every
// key, equal and 1:2:4 weights, including port 11211, which it keeps in the names, unlike
// libmemcached). No server is contacted.
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;

public final class SpymemcachedPeer {
    private static final int FEATURE_TIME = 2;
    private KetamaNodeLocator locator;
    private final Map<MemcachedNode, Integer> index = new IdentityHashMap<>();

    /** A node that only knows its address: all the locator asks of it. */
    private static MemcachedNode node(InetSocketAddress address) {
        return (MemcachedNode) Proxy.newProxyInstance(
            MemcachedNode.class.getClassLoader(), new Class<?>[] {MemcachedNode.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "getSocketAddress" -> address;
                case "toString" -> address.toString();
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> throw new UnsupportedOperationException(method.getName());
            });
    }

    private static InetSocketAddress address(String name) {
        int colon = name.lastIndexOf(':');
        if (colon < 1) throw new IllegalArgumentException("server \"" + name + "\" is not ip:port");
        return new InetSocketAddress(name.substring(0, colon),
                                     Integer.parseInt(name.substring(colon + 1)));
    }

    private long build(ByteBuffer request) {
        int n = request.getInt();
        List<MemcachedNode> nodes = new ArrayList<>();
        Map<InetSocketAddress, Integer> weights = new HashMap<>();
        boolean weighted = false;
        index.clear();
        for (int i = 0; i < n; i++) {
            InetSocketAddress address = address(string(request));
            double weight = request.getDouble();
            if (weight < 1 || weight != Math.rint(weight)) {
                throw new IllegalArgumentException("weights must be positive integers (got " + weight + ")");
            }
            weighted |= weight != 1;
            MemcachedNode node = node(address);
            nodes.add(node);
            index.put(node, i);
            weights.put(address, (int) weight);
        }
        if (!string(request).isEmpty()) throw new IllegalArgumentException("takes no parameters");
        locator = weighted
            ? new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH,
                                    KetamaNodeKeyFormatter.Format.SPYMEMCACHED, weights)
            : new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH);
        return -1;
    }

    private static String string(ByteBuffer request) {
        byte[] bytes = new byte[request.getInt()];
        request.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String[] keys(ByteBuffer request) {
        int n = request.getInt();
        int[] offsets = new int[n + 1];
        for (int i = 0; i <= n; i++) offsets[i] = request.getInt();
        byte[] blob = new byte[offsets[n]];
        request.get(blob);
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = new String(blob, offsets[i], offsets[i + 1] - offsets[i], StandardCharsets.UTF_8);
        }
        return keys;
    }

    private void route(String[] keys, ByteBuffer owners) {
        for (String key : keys) owners.putShort((short) (int) index.get(locator.getPrimary(key)));
    }

    private ByteBuffer answer(ByteBuffer request) {
        byte opcode = request.get();
        switch (opcode) {
            case 'H': {
                int version = request.getInt();
                byte[] name = "spymemcached KetamaNodeLocator".getBytes(StandardCharsets.UTF_8);
                byte[] release = "2.12.3".getBytes(StandardCharsets.UTF_8);
                ByteBuffer out = buffer(16 + name.length + release.length);
                out.putInt(version).putInt(FEATURE_TIME).putInt(name.length).put(name);
                return out.putInt(release.length).put(release);
            }
            case 'B':
                return buffer(8).putLong(build(request));
            case 'R': {
                String[] keys = keys(request);
                ByteBuffer out = buffer(4 + 2 * keys.length).putInt(keys.length);
                route(keys, out);
                return out;
            }
            case 'T': {
                int repeats = request.getInt();
                String[] keys = keys(request);
                ByteBuffer out = buffer(4 + 8 * repeats).putInt(repeats);
                ByteBuffer owners = buffer(2 * keys.length);
                for (int r = 0; r < repeats; r++) {
                    owners.clear();
                    long start = System.nanoTime();
                    route(keys, owners);
                    out.putDouble((System.nanoTime() - start) / (double) Math.max(1, keys.length));
                }
                return out;
            }
            default:
                throw new IllegalArgumentException("unsupported request " + (char) opcode);
        }
    }

    private static ByteBuffer buffer(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 20));
        BufferedOutputStream out = new BufferedOutputStream(System.out, 1 << 20);
        SpymemcachedPeer peer = new SpymemcachedPeer();
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
