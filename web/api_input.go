package web

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// requestInput builds the JSON input object of an operation from the request: the JSON body
// (withBody, for POST), one string field per query parameter (an array of strings when the
// parameter repeats), and the path's :id as the field the route names (thread, or claim). The operation decodes the object
// and refuses what does not belong in it, so an unknown query parameter is its invalid_body
// like an unknown body field. What only HTTP can get wrong is refused here, as invalid_body: a
// body that is not declared JSON, a field given both in the query and in the body, and a
// thread (or claim) that differs from the path's.
//
// A body that is not a JSON object is passed on unchanged, for the operation to refuse in its
// own words.
//
// Without query parameters or a path id the body alone is the input, and is passed on as it
// came: taking it apart and writing it again would give the operation the same object.
func requestInput(c *fiber.Ctx, withBody bool, id pathID) ([]byte, *protocol.Error) {
	if c.Context().QueryArgs().Len() == 0 && c.Params("id") == "" {
		return bodyInput(c, withBody)
	}
	fields := map[string]json.RawMessage{}
	if withBody {
		body := c.Request().Body()
		if len(bytes.TrimSpace(body)) > 0 {
			if e := checkJSONContent(c); e != nil {
				return nil, e
			}
			if json.Unmarshal(body, &fields) != nil || fields == nil { // fields is nil for "null"
				return body, nil
			}
			// Taken apart, the body keeps one of two values of a key: refused before that.
			if e := protocol.CheckRepeatedKeys(body); e != nil {
				return nil, e
			}
			for k, v := range fields {
				if string(bytes.TrimSpace(v)) == "null" { // § 2: null counts as absent
					delete(fields, k)
				}
			}
		}
	}
	if e := addQuery(c, fields); e != nil {
		return nil, e
	}
	if value := c.Params("id"); value != "" {
		if e := addPathID(fields, id, value); e != nil {
			return nil, e
		}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		// Cannot happen: every value is either a string or came out of json.Unmarshal.
		return nil, protocol.Refuse(protocol.ReasonInvalidBody, "the request cannot be read as a JSON object")
	}
	return raw, nil
}

// bodyInput is requestInput's answer for a request without query parameters or a path id:
// the body, when there is one and it is declared JSON, and otherwise the empty object.
func bodyInput(c *fiber.Ctx, withBody bool) ([]byte, *protocol.Error) {
	if withBody {
		if body := c.Request().Body(); len(bytes.TrimSpace(body)) > 0 {
			if e := checkJSONContent(c); e != nil {
				return nil, e
			}
			return body, nil
		}
	}
	return []byte("{}"), nil
}

// checkJSONContent accepts a body declared application/json (in UTF-8, the only charset
// JSON has) or not declared at all. Compressed bodies are refused rather than inflated: the
// size limit is on the bytes received, and inflating would lift it.
func checkJSONContent(c *fiber.Ctx) *protocol.Error {
	if enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding)); enc != "" && !strings.EqualFold(enc, "identity") {
		return protocol.Refuse(protocol.ReasonInvalidBody, "Content-Encoding %q is not accepted; send the JSON body uncompressed", enc)
	}
	declared := c.Get(fiber.HeaderContentType)
	if strings.TrimSpace(declared) == "" {
		return nil
	}
	media, params, err := mime.ParseMediaType(declared)
	if err == nil && media == fiber.MIMEApplicationJSON {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	return protocol.Refuse(protocol.ReasonInvalidBody, "Content-Type %q is not accepted; the body must be JSON (Content-Type: application/json)", declared)
}

// addQuery adds each query parameter to fields as a string, or an array of strings when it
// repeats, so that the operation refuses repetitions of single-valued fields by their type.
func addQuery(c *fiber.Ctx, fields map[string]json.RawMessage) *protocol.Error {
	var keys []string
	values := map[string][]string{}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		key := string(k)
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = append(values[key], string(v))
	})
	for _, key := range keys {
		if _, inBody := fields[key]; inBody {
			return protocol.Refuse(protocol.ReasonInvalidBody, "field %s is given both in the query and in the body; give it once", key)
		}
		var raw []byte
		if vs := values[key]; len(vs) == 1 {
			raw, _ = json.Marshal(vs[0])
		} else {
			raw, _ = json.Marshal(vs)
		}
		fields[key] = raw
	}
	return nil
}

// pathID is the field a route's :id stands for, and the prefix of its ids.
type pathID struct{ field, prefix string }

var (
	threadPath  = pathID{"thread", "th_"}
	claimPath   = pathID{"claim", "cl_"}
	messagePath = pathID{"message", "msg_"}
	roomPath    = pathID{"room", "rm_"}
	// identityPath is an identity (§ 17), <realm>:<handle>, the colon perhaps escaped.
	identityPath = pathID{"identity", ""}
)

// addPathID sets the route's field to the path's id. An input that names it itself must name
// the same one, in any of its forms (th_7, 7, "7").
func addPathID(fields map[string]json.RawMessage, id pathID, value string) *protocol.Error {
	if id == identityPath {
		if unescaped, err := url.PathUnescape(value); err == nil {
			value = unescaped
		}
		if given, ok := fields[id.field]; ok && string(given) != strconv.Quote(value) {
			return protocol.Refuse(protocol.ReasonInvalidBody, "field identity (%s) is not the identity of the path (%s); leave it out", given, value)
		}
		fields[id.field], _ = json.Marshal(value)
		return nil
	}
	path, _ := json.Marshal(value)
	if given, ok := fields[id.field]; ok {
		want, okPath := protocol.ParseIDString(value, id.prefix)
		got, okGiven := protocol.ParseID(given, id.prefix)
		if !okPath || !okGiven || want != got {
			return protocol.Refuse(protocol.ReasonInvalidBody, "field %s (%s) is not the %s of the path (%s); leave it out", id.field, given, id.field, value)
		}
	}
	fields[id.field] = path
	return nil
}
