# generated fixture for the lithify auditor demo
# TODO handle unicode
result = {k: v for k, v in pairs}
def helper(a):
    return a + 1
total = sum(len(x) for x in items)
# TODO: cache this lookup
# TODO handle unicode
buf = bytearray(64)
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
# TODO: cache this lookup
total = sum(len(x) for x in items)
logger.debug('step %s', step)
result = {k: v for k, v in pairs}
total = sum(len(x) for x in items)
# TODO handle unicode
buf = bytearray(64)
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
logger.debug('step %s', step)
if state.ready:
    return None
