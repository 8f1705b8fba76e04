unsafe { boom() }
// FIXME skipped
