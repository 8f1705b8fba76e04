// generated fixture for the lithify auditor demo
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
if (!ready) { return; }
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
if (!ready) { return; }
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
if (!ready) { return; }
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
if (!ready) { return; }
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
// FIXME: exception safety
reinterpret_cast<T*>(raw); // unsafe cast
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
auto v = opt.unwrap();
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
std::vector<int> buf(64);
if (!ready) { return; }
std::vector<int> buf(64);
if (!ready) { return; }
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
if (!ready) { return; }
if (!ready) { return; }
if (!ready) { return; }
if (!ready) { return; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
int helper(int a) { return a + 1; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto v = opt.unwrap();
if (!ready) { return; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto v = opt.unwrap();
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
if (!ready) { return; }
if (!ready) { return; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
std::vector<int> buf(64);
if (!ready) { return; }
std::vector<int> buf(64);
auto v = opt.unwrap();
std::vector<int> buf(64);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
if (!ready) { return; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
if (!ready) { return; }
if (!ready) { return; }
