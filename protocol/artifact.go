package protocol

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"mime"
	"strings"

	"github.com/parleyforum/parley/storage"
)

// § 13 artifacts: a content-addressed store for evidence. The ref of an artifact is the
// sha256 of its bytes, so the same bytes are one artifact however often they come.

// ArtifactsVersion is the version of the profile this instance implements.
const ArtifactsVersion = "1"

// DefaultArtifactMediaType is the media type of bytes sent without one.
const DefaultArtifactMediaType = "application/octet-stream"

// ArtifactInfo is what PUT /v1/artifacts answers: the ref, the size and the stored media type.
type ArtifactInfo struct {
	Ref       string `json:"ref"`
	Size      int64  `json:"size"`
	MediaType string `json:"media_type"`
}

// Artifact is a stored artifact with its bytes; as JSON (artifact_get) the bytes are base64.
type Artifact struct {
	ArtifactInfo
	Content []byte `json:"content_base64"`
}

// ArtifactRef is the ref of content: sha256:<64 lowercase hex>.
func ArtifactRef(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckArtifactSize is the first check of PUT /v1/artifacts (§ 9): bytes over
// artifact_max_bytes are payload_too_large, decided before anything else is read.
func (s *Service) CheckArtifactSize(n int) error {
	if n > s.limits.ArtifactMaxBytes {
		return Refuse(ReasonPayloadTooLarge, "the artifact has %d bytes; at most artifact_max_bytes (%d)", n, s.limits.ArtifactMaxBytes)
	}
	return nil
}

// ArtifactInputMaxBytes bounds the input of artifact_put: the base64 of an artifact of
// artifact_max_bytes and room for the other fields.
func ArtifactInputMaxBytes(l Limits) int {
	return base64.StdEncoding.EncodedLen(l.ArtifactMaxBytes) + l.RequestMaxBytes
}

// ArtifactInputMaxBytes is ArtifactInputMaxBytes of the limits in force.
func (s *Service) ArtifactInputMaxBytes() int { return ArtifactInputMaxBytes(s.limits) }

// CheckArtifactInputSize is CheckRequestSize for artifact_put's JSON input.
func (s *Service) CheckArtifactInputSize(n int) error {
	if n > s.ArtifactInputMaxBytes() {
		return Refuse(ReasonPayloadTooLarge, "the request has %d bytes; an artifact of artifact_max_bytes (%d) needs at most %d in base64",
			n, s.limits.ArtifactMaxBytes, s.ArtifactInputMaxBytes())
	}
	return nil
}

// PutArtifact stores content as sent with mediaType (the Content-Type; "" for none) and
// answers its ref. Checks in the order of § 9: size, token, the media type, the write
// right, the write rate. It returns once the bytes are durable.
func (s *Service) PutArtifact(ctx context.Context, a *Actor, content []byte, mediaType string) (*ArtifactInfo, error) {
	if err := s.CheckArtifactSize(len(content)); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, Refuse(ReasonUnauthenticated, "a bearer token is required (Authorization: Bearer <token>)")
	}
	if len(content) == 0 {
		return nil, Refuse(ReasonInvalidBody, "the artifact is empty; send its bytes as the body")
	}
	media, err := normalMediaType(mediaType)
	if err != nil {
		return nil, err
	}
	if err := requireActor(a, RightWrite); err != nil {
		return nil, err
	}
	now := storage.Now()
	key := IdempotencyKeyOf(ctx)
	var info *ArtifactInfo
	ctx, cancel := writing(ctx)
	defer cancel()
	_, err = s.db.PutArtifact(ctx, &storage.Artifact{
		Ref: ArtifactRef(content), Size: int64(len(content)), MediaType: media, Content: content,
		Identity: a.Identity, CreatedAt: now,
	}, s.artifactQuota(), func(ctx context.Context, f *storage.Forum) error {
		return s.countWrite(ctx, f, a, now)
	}, func(ctx context.Context, f *storage.Forum, stored *storage.Artifact) error {
		info = &ArtifactInfo{Ref: stored.Ref, Size: stored.Size, MediaType: stored.MediaType}
		return keepAnswer(ctx, f, key, info)
	})
	if over, ok := errors.AsType[*storage.ArtifactQuotaExceeded](err); ok {
		return nil, quotaExceeded(over, len(content))
	}
	if err != nil {
		return nil, fault(err)
	}
	return info, nil
}

// artifactQuota is what the store may hold: artifact_bytes_per_identity and
// artifact_bytes_total. Bytes count against the identity that stored them first; the same
// bytes stored again are the same artifact and cost nobody anything.
func (s *Service) artifactQuota() storage.ArtifactQuota {
	return storage.ArtifactQuota{PerIdentity: int64(s.limits.ArtifactBytesPerIdentity), Total: int64(s.limits.ArtifactBytesTotal)}
}

// quotaExceeded refuses an artifact of size bytes that its quota has no room for.
func quotaExceeded(over *storage.ArtifactQuotaExceeded, size int) error {
	if over.Total {
		return Refuse(ReasonPayloadTooLarge, "the artifact's %d bytes do not fit: the store holds %d bytes of artifacts, at most artifact_bytes_total (%d)",
			size, over.Used, over.Limit)
	}
	return Refuse(ReasonPayloadTooLarge, "the artifact's %d bytes do not fit: your artifacts take %d bytes, at most artifact_bytes_per_identity (%d)",
		size, over.Used, over.Limit)
}

// PutArtifactInput is PutArtifact for a JSON input (artifact_put):
// {content_base64, media_type?}.
func (s *Service) PutArtifactInput(ctx context.Context, a *Actor, raw []byte) (*ArtifactInfo, error) {
	if err := s.CheckArtifactInputSize(len(raw)); err != nil {
		return nil, err
	}
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	encoded, ok, err := o.str("content_base64")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field content_base64 is missing")
	}
	media, _, err := o.str("media_type")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	content, derr := base64.StdEncoding.DecodeString(encoded)
	if derr != nil {
		return nil, Refuse(ReasonInvalidBody, "field content_base64 must be standard base64 (RFC 4648, with padding)")
	}
	return s.PutArtifact(ctx, a, content, media)
}

// GetArtifact answers {ref}: the artifact with its bytes.
func (s *Service) GetArtifact(ctx context.Context, a *Actor, raw []byte) (*Artifact, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	ref, ok, err := o.str("ref")
	if err != nil {
		return nil, err
	}
	if !ok || !sha256Pattern.MatchString(ref) {
		return nil, Refuse(ReasonInvalidBody, "field ref must be sha256:<64 lowercase hex>, the ref of an artifact")
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	stored, serr := s.db.Read().Artifact(ctx, ref)
	if serr != nil {
		return nil, fault(notFound(serr, "artifact %s not found", ref))
	}
	return &Artifact{
		ArtifactInfo: ArtifactInfo{Ref: stored.Ref, Size: stored.Size, MediaType: stored.MediaType},
		Content:      stored.Content,
	}, nil
}

// hasArtifact is the artifact store's answer for evidence of kind artifact.
func (s *Service) hasArtifact(ctx context.Context, ref string) (bool, error) {
	return s.db.Read().HasArtifact(ctx, ref)
}

// normalMediaType checks a Content-Type and writes it in its normal form (the type and the
// charset in lower case, parameters quoted where needed); none is application/octet-stream.
func normalMediaType(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return DefaultArtifactMediaType, nil
	}
	media, params, err := mime.ParseMediaType(raw)
	if err != nil || !strings.Contains(media, "/") {
		return "", Refuse(ReasonInvalidBody, "the media type %q is not a media type such as text/plain or image/png", raw)
	}
	if charset, ok := params["charset"]; ok {
		params["charset"] = strings.ToLower(charset)
	}
	out := mime.FormatMediaType(media, params)
	if out == "" {
		return "", Refuse(ReasonInvalidBody, "the media type %q is not a media type such as text/plain or image/png", raw)
	}
	return out, nil
}

func init() {
	profiles = append(profiles, ProfileInfo{
		Name:    "artifacts",
		Version: ArtifactsVersion,
		About:   "A content-addressed store for evidence: logs, reproducers and outputs kept with the claims that cite them.",
		Parameters: map[string]string{
			"put":      "PUT /v1/artifacts with the raw bytes as body and their Content-Type (needs write), or artifact_put {content_base64, media_type?}: 201 {ref, size, media_type}",
			"get":      "GET /v1/artifacts/{ref} (needs read): the bytes, a strong ETag (the ref), Cache-Control immutable, 304 to If-None-Match; or artifact_get {ref}: {ref, size, media_type, content_base64}",
			"ref":      "sha256:<64 hex> of the bytes: the same bytes again are the same artifact, stored once, with the media type of their first upload",
			"size":     "1 to limits.artifact_max_bytes bytes (payload_too_large beyond)",
			"quota":    "new bytes count against the identity that stores them first, up to limits.artifact_bytes_per_identity (64 MiB for the reference), and against the store, up to limits.artifact_bytes_total (1 GiB); bytes over either are payload_too_large and nothing is written; bytes stored already cost nothing",
			"served":   "text/plain and the raster images png, jpeg, gif and webp as themselves; anything else as application/octet-stream, an attachment, never rendered",
			"evidence": "evidence {kind: artifact, ref} must name a stored artifact (invalid_body otherwise)",
		},
	})
}
