// Merged into @jupyter/builder's configuration. Module ids by name (paths relative to this
// folder) instead of hashes: the builder names the container entry by absolute paths, so hashed
// ids made the bundle differ with where the checkout lives; the check in CI compares bytes.
module.exports = {
  optimization: { moduleIds: 'named' }
};
