"""idforge_client: the Python client of idforge, a distributed ID issuer.

Standard library only. It speaks idforge's HTTP API (/v1/ids, /v1/serials,
/v1/explain) to one or more nodes, fails over between them the way the Go
client does, and can cache blocks of a segment key's IDs locally::

    from idforge_client import IdForge, IdForgeError

    ids = IdForge(["http://10.0.0.1:8080", "http://10.0.0.2:8080"],
                  token=os.environ["IDFORGE_TOKEN"], range_cache=1000)
    order_id = ids.next_id("order")
    waybill = ids.next_serial("waybill", {"area": "010"})

Every failure is an IdForgeError whose ``code`` is a word of idforge's error
vocabulary and whose ``retryable`` says whether the call may succeed later
or elsewhere. docs/clients.md in the idforge repository is the guide.
"""

from ._client import (DEFAULT_REFILL_AT, DEFAULT_RETRIES, DEFAULT_TIMEOUT, MAX_COUNT, Explanation, IdForge,
                      IdForgeError)
from ._codes import CODES

__version__ = "0.1.0"

__all__ = ["IdForge", "IdForgeError", "Explanation", "CODES", "DEFAULT_TIMEOUT", "DEFAULT_RETRIES",
           "DEFAULT_REFILL_AT", "MAX_COUNT", "__version__"]
