// Package notify holds the formats an http sink can post its events in
// (http(format=NAME)): each a jq program over one batch of events, the array of their
// envelopes, whose outputs are the request's body, and the body's content type. They
// speak each receiver's own language: chat webhooks (Slack, Mattermost, Teams, Discord),
// Alertmanager's alerts API, log stores' ingestion APIs (Loki, Elasticsearch,
// OpenTelemetry's OTLP) and CloudEvents. The shipped ones are files of this package
// (formats/NAME.jq), printed by `kubeevents format NAME`; the config file adds more, or
// replaces shipped ones by name. Every format may use the functions of functions.jq
// (title, detail, unixnano, ...).
package notify

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kubeevents/kubeevents/internal/catalog"
	"github.com/kubeevents/kubeevents/internal/jq"
)

//go:embed formats/*.jq
var shippedFiles embed.FS

// functions are the jq functions every format may use.
//
//go:embed functions.jq
var functions string

// shippedOrder is the order `kubeevents format` lists the shipped formats in: chat, alerts,
// logs, events. Every file of formats/ is in it (TestShippedOrderNamesEveryFile).
var shippedOrder = []string{"slack", "slack-api", "mattermost", "teams", "discord", "alertmanager", "loki", "elasticsearch", "otlp", "cloudevents"}

// FunctionsName is the name `kubeevents format NAME` prints the shared functions under; no
// format may have it.
const FunctionsName = "functions"

// Functions is the jq definitions every format may use, with their comments.
func Functions() string { return functions }

// DefaultContentType is a format's content type when its program does not say.
const DefaultContentType = "application/json"

// Format is one format.
type Format struct {
	Name string
	// Program is the jq program, with its comment lines, as `kubeevents format NAME`
	// prints it. Its first comment line describes it; comment lines of its header may say
	// "content-type: TYPE", "max-batch: N", "max-bytes: N" and "max-chars: N".
	Program     string
	Description string
	ContentType string
	// MaxBatch is the most events one request may hold (the receiver's limit: Discord's
	// 10 embeds, CloudEvents' one event per request in structured mode); 0: the sink's
	// batch setting alone.
	MaxBatch int
	// Limit is the most one request's body may hold, as the service documents it.
	Limit Limit
	// Edit says how the receiver edits a message an http sink posted, for an episode's
	// first message (its "edit:" header line): EditSlack (Slack's Web API), EditDiscord
	// (a Discord webhook's messages); "" when it cannot, and an episode's update or
	// resolution is a message of its own.
	Edit    string
	Shipped bool
}

// The receivers that edit messages (Format.Edit).
const (
	EditSlack   = "slack"
	EditDiscord = "discord"
)

// Limit is how large one request's body may be, in bytes, in characters or both (0: no
// limit in that unit), as a service documents it: Teams takes 28 KB a message, Mattermost
// 16383 characters a post. A body is measured whole, its JSON syntax and escapes
// included, so a limit on the characters of a message's text (its only large part) holds
// when the body's characters are within it.
type Limit struct {
	Bytes int
	Chars int
}

// Fits reports whether body is within the limit.
func (l Limit) Fits(body []byte) bool {
	return (l.Bytes == 0 || len(body) <= l.Bytes) && (l.Chars == 0 || utf8.RuneCount(body) <= l.Chars)
}

// Share is how much of body the limit holds: less than 1 when body is over it (0.5: half
// of it fits), 1 or more when it fits.
func (l Limit) Share(body []byte) float64 {
	share := 1.0
	if l.Bytes > 0 && len(body) > 0 {
		share = float64(l.Bytes) / float64(len(body))
	}
	if l.Chars > 0 {
		if runes := utf8.RuneCount(body); runes > 0 {
			share = min(share, float64(l.Chars)/float64(runes))
		}
	}
	return share
}

// None reports whether there is no limit.
func (l Limit) None() bool { return l.Bytes == 0 && l.Chars == 0 }

// Size is body's size in the limit's units, for messages: "30712 bytes", "17002
// characters".
func (l Limit) Size(body []byte) string {
	if l.Bytes == 0 && l.Chars > 0 {
		return strconv.Itoa(utf8.RuneCount(body)) + " characters"
	}
	return strconv.Itoa(len(body)) + " bytes"
}

// String says the limit: "28000 bytes", "16383 characters", "no limit".
func (l Limit) String() string {
	switch {
	case l.None():
		return "no limit"
	case l.Chars == 0:
		return strconv.Itoa(l.Bytes) + " bytes"
	case l.Bytes == 0:
		return strconv.Itoa(l.Chars) + " characters"
	}
	return strconv.Itoa(l.Bytes) + " bytes and " + strconv.Itoa(l.Chars) + " characters"
}

// Within is the smaller of l and m in each unit.
func (l Limit) Within(m Limit) Limit {
	smaller := func(a, b int) int {
		if a == 0 || b != 0 && b < a {
			return b
		}
		return a
	}
	return Limit{Bytes: smaller(l.Bytes, m.Bytes), Chars: smaller(l.Chars, m.Chars)}
}

// Parse reads a format's header: its description and the content-type, max-batch,
// max-bytes, max-chars and edit comment lines among the comment lines it starts with.
func Parse(name, program string, shipped bool) (Format, error) {
	f := Format{Name: name, Program: program, ContentType: DefaultContentType, Shipped: shipped}
	for line := range strings.SplitSeq(program, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			break // the header ends at the program
		}
		text = strings.TrimSpace(text)
		key, value, _ := strings.Cut(text, ":")
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "content-type":
			f.ContentType = strings.TrimSpace(value)
			if f.ContentType == "" {
				return Format{}, fmt.Errorf("format %q: its content-type line names no type", name)
			}
		case "edit":
			f.Edit = strings.TrimSpace(value)
			if f.Edit != EditSlack && f.Edit != EditDiscord {
				return Format{}, fmt.Errorf("format %q: edit %q: kubeevents edits the messages of %s or %s", name, f.Edit, EditSlack, EditDiscord)
			}
		case "max-batch", "max-bytes", "max-chars":
			key = strings.ToLower(strings.TrimSpace(key))
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 1 {
				return Format{}, fmt.Errorf("format %q: %s %q: give a whole number, 1 or more", name, key, strings.TrimSpace(value))
			}
			switch key {
			case "max-batch":
				f.MaxBatch = n
			case "max-bytes":
				f.Limit.Bytes = n
			default:
				f.Limit.Chars = n
			}
		default:
			if f.Description == "" {
				f.Description = text
			}
		}
	}
	return f, nil
}

// CheckName reports a name a format cannot have.
func CheckName(name string) error {
	if name == FunctionsName {
		return fmt.Errorf("format name %q is taken: kubeevents format %s prints the functions every format may use", name, name)
	}
	return catalog.CheckName("format", name)
}

// Catalog is the formats a run knows: the shipped ones and the config file's.
type Catalog struct {
	*catalog.Catalog[Format]
}

var kind = &catalog.Kind[Format]{Noun: "format", Lister: "kubeevents format", Files: shippedFiles, Dir: "formats",
	Order: shippedOrder, Check: CheckName, Make: Parse, Name: func(f Format) string { return f.Name }}

// Shipped is the catalog of the shipped formats alone.
func Shipped() *Catalog { return &Catalog{kind.Shipped()} }

// NewCatalog is the shipped formats and the user's (name → program): the user's replace
// shipped ones of the same name and come after them in name order otherwise.
func NewCatalog(user map[string]string) (*Catalog, error) {
	c, err := catalog.New(kind, user)
	if err != nil {
		return nil, err
	}
	return &Catalog{c}, nil
}

// Compiled is a format ready to make request bodies. Safe for concurrent use.
type Compiled struct {
	Format
	query *jq.Query
}

// Compile compiles the format's program with the shared functions.
func (f Format) Compile() (*Compiled, error) {
	q, err := jq.CompileWith(f.Program, functions)
	if err != nil {
		return nil, fmt.Errorf("format %q: %v", f.Name, err)
	}
	return &Compiled{Format: f, query: q}, nil
}

// errNoBody is a batch the program gave nothing for.
var errNoBody = errors.New("the format gave no body for it")

// Body runs the format on a batch (the events' envelopes, as jq.EnvelopeValue gives
// them) and returns the request's body: its one output, a string as it is or any other
// value as compact JSON; several outputs as JSON lines, each ending with a newline (an
// NDJSON body, such as Elasticsearch's bulk API takes).
func (c *Compiled) Body(ctx context.Context, batch []any) ([]byte, error) {
	outs, err := c.query.Run(ctx, batch)
	if err != nil {
		return nil, err
	}
	switch len(outs) {
	case 0:
		return nil, errNoBody
	case 1:
		if s, ok := outs[0].(string); ok {
			return []byte(s), nil
		}
		b, err := jq.AppendOutput(nil, outs[0], false)
		return bytes.TrimSuffix(b, []byte("\n")), err
	}
	var body []byte
	for _, v := range outs {
		if body, err = jq.AppendOutput(body, v, false); err != nil {
			return nil, err
		}
	}
	return body, nil
}
