package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage/storagetest"
)

// What one send costs over MCP against over HTTP, on the same server, with sendingAgents
// agents sending at once over real loopback connections. Each iteration is one round: every
// transport in turn (mcp-sdk, mcp-raw, http, the first place moving on each round) has each
// agent send sendsPerTurn messages, so that whatever else the machine does weighs on all of
// them alike; short turns and many rounds (-benchtime 30x) keep a burst of the machine's
// other work from falling on one transport only. Reported per transport:
// sends per second over all rounds, the p50 of one send and the process's CPU time per send
// (server and client together); and the ratios mcp/http.
//
//	bin/with-postgres -- go test ./web -run '^$' -bench TransportSend -benchtime 30x
//
// Two MCP clients, as real agents speak MCP:
//   - mcp-sdk: the official Go SDK's client over its Streamable HTTP transport, one session
//     per agent (connected before the rounds, as an agent connects once).
//   - mcp-raw: one JSON-RPC tools/call POST per send, with the headers a Streamable HTTP
//     client sends (Accept, MCP-Protocol-Version, Authorization), read to its end.
//
// The HTTP client is POST /v1/messages. Every agent has a connection of its own in each.
func BenchmarkTransportSend(b *testing.B) {
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			limits := protocol.DefaultLimits()
			limits.WritesPerMinute, limits.ThreadMaxMessages = math.MaxInt32, math.MaxInt32
			f := newForum(b, storagetest.Open(b, kind), limits)
			agents := newSendingAgents(b, f)
			ways := []sendWay{
				{"mcp-sdk", (*sendingAgent).sendOverSDK},
				{"mcp-raw", (*sendingAgent).sendOverJSONRPC},
				{"http", (*sendingAgent).sendOverHTTP},
			}
			took, cpu := make([]time.Duration, len(ways)), make([]time.Duration, len(ways))
			latencies := make([][]time.Duration, len(ways))
			for round := 0; b.Loop(); round++ {
				for k := range ways {
					i := (round + k) % len(ways) // each takes each place in the order in turn
					cpu0, _ := processCPU()
					elapsed, lat := agents.turn(ways[i].send)
					cpu1, _ := processCPU()
					took[i] += elapsed
					cpu[i] += cpu1 - cpu0
					latencies[i] = append(latencies[i], lat...)
				}
			}
			rate := map[string]float64{}
			for i, way := range ways {
				rate[way.name] = float64(len(latencies[i])) / took[i].Seconds()
				b.ReportMetric(rate[way.name], way.name+"-sends/s")
				b.ReportMetric(float64(median(latencies[i]).Microseconds()), way.name+"-p50-µs")
			}
			b.ReportMetric(rate["mcp-sdk"]/rate["http"], "mcp-sdk/http")
			b.ReportMetric(rate["mcp-raw"]/rate["http"], "mcp-raw/http")
			if _, measured := processCPU(); measured {
				// CPU time is what the machine's other work disturbs least. Server and
				// clients share the process; the raw JSON-RPC and the HTTP client do alike
				// work, so the difference between them is the server's.
				perSend := map[string]float64{}
				for i, way := range ways {
					perSend[way.name] = float64(cpu[i].Microseconds()) / float64(len(latencies[i]))
					b.ReportMetric(perSend[way.name], way.name+"-cpu-µs/send")
				}
				b.ReportMetric(perSend["mcp-raw"]/perSend["http"], "cpu-mcp-raw/http")
			}
		})
	}
}

const (
	sendingAgents = 16
	sendsPerTurn  = 4 // per agent and transport in one round
)

type sendWay struct {
	name string
	send func(*sendingAgent) error
}

// sendingAgent is one agent: an identity of its own, a thread another opened for it to write
// in, and a connection per transport.
type sendingAgent struct {
	base, secret string
	envelope     []byte
	http         *http.Client
	rpc          *http.Client
	session      *mcp.ClientSession
	id           int
}

type sendingAgentSet []*sendingAgent

func newSendingAgents(b *testing.B, f *forum) sendingAgentSet {
	agents := make(sendingAgentSet, sendingAgents)
	for i := range agents {
		secret := f.token("ainotes:agent"+strconv.Itoa(i), false, "read,write", nil)
		th, _ := f.ask(f.alice, "Thread "+strconv.Itoa(i)+" for the benchmark of sends")
		a := &sendingAgent{
			base: f.base, secret: secret,
			envelope: []byte(`{"kind":"note","thread":"` + th + `","body":"A note of some length, as notes go in a thread: ` +
				`it says what was tried, what was seen, and what the agent will try next."}`),
			http: ownConnection(),
			rpc:  ownConnection(),
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "parley-bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint:   f.base + "/mcp",
			HTTPClient: &http.Client{Transport: bearerOver{secret, ownConnection().Transport}},
		}, nil)
		if err != nil {
			b.Fatalf("connecting agent %d: %v", i, err)
		}
		b.Cleanup(func() { cs.Close() })
		a.session = cs
		agents[i] = a
	}
	return agents
}

// ownConnection is a client that keeps one connection open to the server.
func ownConnection() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
}

// bearerOver adds the agent's token to every request of the SDK's client, as a client
// configured with the header does.
type bearerOver struct {
	secret string
	next   http.RoundTripper
}

func (t bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.secret)
	return t.next.RoundTrip(r)
}

// turn has every agent send sendsPerTurn messages at once, and returns the time the turn
// took and the latency of each send.
func (agents sendingAgentSet) turn(send func(*sendingAgent) error) (time.Duration, []time.Duration) {
	lat := make([][]time.Duration, len(agents))
	errs := make(chan error, len(agents))
	var wg sync.WaitGroup
	start := time.Now()
	for i, a := range agents {
		wg.Go(func() {
			for range sendsPerTurn {
				t0 := time.Now()
				if err := send(a); err != nil {
					errs <- err
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		panic(err)
	}
	return elapsed, slices.Concat(lat...)
}

func (a *sendingAgent) sendOverSDK() error {
	res, err := a.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "send", Arguments: json.RawMessage(a.envelope)})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("send over MCP refused: %+v", res.StructuredContent)
	}
	return nil
}

func (a *sendingAgent) sendOverJSONRPC() error {
	a.id++
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(a.id) + `,"method":"tools/call","params":{"name":"send","arguments":` + string(a.envelope) + `}}`
	req, err := http.NewRequest(http.MethodPost, a.base+"/mcp", bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+a.secret)
	data, err := exchange(a.rpc, req, http.StatusOK)
	if err != nil {
		return err
	}
	// The outcome is checked, not the whole answer decoded: the HTTP client does no more.
	if !bytes.Contains(data, []byte(`,"result":{`)) || bytes.Contains(data, []byte(`"isError":true`)) {
		return fmt.Errorf("send over JSON-RPC: %.300s", data)
	}
	return nil
}

func (a *sendingAgent) sendOverHTTP() error {
	req, err := http.NewRequest(http.MethodPost, a.base+"/v1/messages", bytes.NewReader(a.envelope))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.secret)
	_, err = exchange(a.http, req, http.StatusCreated)
	return err
}

func exchange(client *http.Client, req *http.Request, status int) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != status {
		err = fmt.Errorf("%s %s: %s %.300s", req.Method, req.URL.Path, resp.Status, data)
	}
	return data, err
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
