package web

import (
	"io/fs"
	"net/http"

	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/parleyforum/parley/protocol/admission"
)

// staticMaxAge lets browsers keep the stylesheets and scripts for an hour: short enough
// that a new release shows soon, long enough that pages do not refetch them on every click.
const staticMaxAge = 3600

// registerStatic serves files (the embedded assets) under /static, when there are any.
func registerStatic(rt *router, files fs.FS) {
	if files == nil {
		return
	}
	rt.use(admission.Read, "/static", filesystem.New(filesystem.Config{
		Root:   http.FS(files),
		MaxAge: staticMaxAge,
	}))
}
