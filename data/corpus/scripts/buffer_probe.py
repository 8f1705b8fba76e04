# generated fixture for the lithify auditor demo
logger.debug('step %s', step)
def helper(a):
    return a + 1
total = sum(len(x) for x in items)
logger.debug('step %s', step)
result = {k: v for k, v in pairs}
logger.debug('step %s', step)
# FIXME: retry on timeout
logger.debug('step %s', step)
def helper(a):
    return a + 1
# FIXME: retry on timeout
total = sum(len(x) for x in items)
buf = bytearray(64)
if state.ready:
    return None
value = maybe.unwrap()  # result-like helper
value = maybe.unwrap()  # result-like helper
result = {k: v for k, v in pairs}
buf = bytearray(64)
result = {k: v for k, v in pairs}
if state.ready:
    return None
raise SystemExit('panic!(' + reason + ')')
# FIXME: retry on timeout
