// generated fixture for the lithify auditor demo
// TODO noexcept
std::vector<int> buf(64);
// TODO: use span
// FIXME: exception safety
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
// TODO noexcept
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
auto t = lexer.expect("(");
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
// TODO noexcept
if (!ready) { return; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
// TODO noexcept
if (!ready) { return; }
