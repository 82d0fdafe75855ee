package diff

// Usage is what an action costs and frees, in quantities: what the plan
// estimates from the metadata it read (Action.Estimate) and what apply
// counted while it ran (apply.ActionResult.Actual). One type for both, so
// that the two are compared field by field (docs/plan-format.md, "Cost").
// Money is derived from it and a pricing block; it is never stored here.
type Usage struct {
	Requests Requests `json:"requests"`
	// BytesRead and BytesWritten are object bytes transferred (data files,
	// delete files, manifests, manifest lists, metadata JSON).
	BytesRead    int64 `json:"bytes_read"`
	BytesWritten int64 `json:"bytes_written"`
	// FilesRead, FilesWritten and FilesDeleted count objects.
	FilesRead    int64 `json:"files_read"`
	FilesWritten int64 `json:"files_written"`
	FilesDeleted int64 `json:"files_deleted"`
	// BytesFreed is the storage the action releases: at once for a deletion
	// (expiry, orphans, a quarantine purge), and once the snapshots that
	// still hold the old files expire for a rewrite (compaction, manifests).
	BytesFreed int64 `json:"bytes_freed"`
	// ScanOpensSaved is how many fewer objects (data and delete files,
	// manifests) a full scan of the table opens once the action is done: a
	// reader's saving, per scan.
	ScanOpensSaved int64 `json:"scan_opens_saved,omitempty"`
	// CPUSeconds is compute time of the process (user + system).
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakMemoryBytes is the most the action holds at once (estimate: from
	// its group sizes and the memory budget).
	PeakMemoryBytes int64 `json:"peak_memory_bytes,omitempty"`
}

// Requests counts object-store requests by kind.
type Requests struct {
	List int64 `json:"list"` // LIST pages
	Get  int64 `json:"get"`  // GETs, each ranged read one
	Head int64 `json:"head"` // HEAD / stat
	Put  int64 `json:"put"`  // PUTs, each multipart part (and the multipart start and completion) one
	// Delete counts single-object deletes; BatchDelete counts batch
	// requests (S3 DeleteObjects, GCS and Azure batches), each up to its
	// store's batch size.
	Delete      int64 `json:"delete"`
	BatchDelete int64 `json:"batch_delete"`
}

// Add adds o to r.
func (r *Requests) Add(o Requests) {
	r.List += o.List
	r.Get += o.Get
	r.Head += o.Head
	r.Put += o.Put
	r.Delete += o.Delete
	r.BatchDelete += o.BatchDelete
}

// Total is the number of requests of every kind.
func (r Requests) Total() int64 {
	return r.List + r.Get + r.Head + r.Put + r.Delete + r.BatchDelete
}

// Add adds o to u; the peak is the larger of the two.
func (u *Usage) Add(o Usage) {
	u.Requests.Add(o.Requests)
	u.BytesRead += o.BytesRead
	u.BytesWritten += o.BytesWritten
	u.FilesRead += o.FilesRead
	u.FilesWritten += o.FilesWritten
	u.FilesDeleted += o.FilesDeleted
	u.BytesFreed += o.BytesFreed
	u.ScanOpensSaved += o.ScanOpensSaved
	u.CPUSeconds += o.CPUSeconds
	u.PeakMemoryBytes = max(u.PeakMemoryBytes, o.PeakMemoryBytes)
}
