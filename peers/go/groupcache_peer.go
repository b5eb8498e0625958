// groupcache's consistenthash (github.com/golang/groupcache, Debian
// golang-github-golang-groupcache-dev 0.0~git20200121) as a ring-harness peer behind the
// process protocol (docs/guide/foreign-peers.md).
//
// Build (offline, GOPATH mode, from the Debian package's sources):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o groupcache_peer groupcache_peer.go
//
// BUILD's parameter string is the replica count ("replicas=160"; default 160). groupcache
// places replica i of server s at CRC-32 (IEEE) of strconv.Itoa(i) + s, sorted; a key goes
// to the first point >= CRC-32 of the key, wrapping; of equal points the server added
// last wins (its map is written in order). It takes no weights: BUILD refuses any but 1.
// That is our `points` construction with hash = "crc32" and point_name = "{j}{server}".
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/golang/groupcache/consistenthash"
)

const featureTime = 2

type request struct {
	body []byte
	at   int
}

func (r *request) take(n int) []byte {
	if r.at+n > len(r.body) {
		panic("request cut short")
	}
	chunk := r.body[r.at : r.at+n]
	r.at += n
	return chunk
}

func (r *request) u32() uint32  { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *request) f64() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(r.take(8))) }
func (r *request) str() string  { return string(r.take(int(r.u32()))) }
func u32(v uint32) []byte       { return binary.LittleEndian.AppendUint32(nil, v) }
func i64(v int64) []byte        { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
func text(s string) []byte      { return append(u32(uint32(len(s))), s...) }

// keys reads a ROUTE payload: n, n + 1 offsets, the key bytes.
func (r *request) keys() [][]byte {
	n := int(r.u32())
	offsets := make([]uint32, n+1)
	for i := range offsets {
		offsets[i] = r.u32()
	}
	blob := r.take(int(offsets[n]))
	keys := make([][]byte, n)
	for i := 0; i < n; i++ {
		keys[i] = blob[offsets[i]:offsets[i+1]]
	}
	return keys
}

type peer struct {
	ring  *consistenthash.Map
	index map[string]uint16
}

func (p *peer) route(keys [][]byte, owners []byte) {
	for i, key := range keys {
		binary.LittleEndian.PutUint16(owners[2*i:], p.index[p.ring.Get(string(key))])
	}
}

func (p *peer) answer(r *request) ([]byte, error) {
	switch r.body[0] {
	case 'H':
		version := r.u32()
		out := append(append(u32(version), u32(featureTime)...), text("groupcache consistenthash")...)
		return append(out, text("0.0~git20200121")...), nil
	case 'B':
		n := int(r.u32())
		names := make([]string, n)
		p.index = make(map[string]uint16, n)
		for i := range names {
			names[i] = r.str()
			if weight := r.f64(); weight != 1 {
				return nil, fmt.Errorf("groupcache takes no weights (server %q has %g)", names[i], weight)
			}
			p.index[names[i]] = uint16(i)
		}
		replicas := 160
		if params := r.str(); params != "" {
			value, err := strconv.Atoi(strings.TrimPrefix(params, "replicas="))
			if err != nil || value < 1 || !strings.HasPrefix(params, "replicas=") {
				return nil, fmt.Errorf("params must be replicas=N (got %q)", params)
			}
			replicas = value
		}
		p.ring = consistenthash.New(replicas, nil)
		p.ring.Add(names...)
		return i64(int64(replicas * n)), nil
	case 'R':
		keys := r.keys()
		owners := make([]byte, 2*len(keys))
		p.route(keys, owners)
		return append(u32(uint32(len(keys))), owners...), nil
	case 'T':
		repeats := int(r.u32())
		keys := r.keys()
		owners := make([]byte, 2*len(keys))
		out := u32(uint32(repeats))
		for i := 0; i < repeats; i++ {
			start := time.Now()
			p.route(keys, owners)
			perKey := float64(time.Since(start).Nanoseconds()) / math.Max(1, float64(len(keys)))
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(perKey))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported request %q", r.body[0])
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	p := &peer{}
	header := make([]byte, 4)
	for {
		if _, err := io.ReadFull(in, header); err != nil {
			return
		}
		body := make([]byte, binary.LittleEndian.Uint32(header))
		if _, err := io.ReadFull(in, body); err != nil || len(body) == 0 {
			os.Exit(1)
		}
		if body[0] == 'Q' {
			return
		}
		payload, err := p.answer(&request{body: body, at: 1})
		status := byte('K')
		if err != nil {
			status, payload = 'E', text(err.Error())
		}
		out.Write(u32(uint32(1 + len(payload))))
		out.WriteByte(status)
		out.Write(payload)
		out.Flush()
	}
}
