# generated fixture for the lithify auditor demo
result = {k: v for k, v in pairs}
buf = bytearray(64)
if state.ready:
    return None
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
if state.ready:
    return None
total = sum(len(x) for x in items)
value = maybe.unwrap()  # result-like helper
logger.debug('step %s', step)
# TODO handle unicode
if state.ready:
    return None
result = {k: v for k, v in pairs}
logger.debug('step %s', step)
buf = bytearray(64)
logger.debug('step %s', step)
value = maybe.unwrap()  # result-like helper
# TODO handle unicode
result = {k: v for k, v in pairs}
value = maybe.unwrap()  # result-like helper
logger.debug('step %s', step)
value = maybe.unwrap()  # result-like helper
value = maybe.unwrap()  # result-like helper
buf = bytearray(64)
def helper(a):
    return a + 1
buf = bytearray(64)
value = maybe.unwrap()  # result-like helper
total = sum(len(x) for x in items)
