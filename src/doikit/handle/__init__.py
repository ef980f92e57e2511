"""Handle records and their JSON, as the Handle REST API and the doi.org proxy use them.

Pure and standard-library only: the server writes these shapes and the clients read them.

>>> from doikit.handle import HandleValue, HandleRecord, record_body
>>> rec = HandleRecord("10.1000/1", (HandleValue(1, "URL", b"https://www.doi.org/"),))
>>> record_body(rec)
'{"responseCode":1,"handle":"10.1000/1","values":[{"index":1,"type":"URL","data":{"format":"string","value":"https://www.doi.org/"},"ttl":86400}]}'
"""

from doikit.handle._locations import (
    Location,
    Locations,
    choose_location,
    parse_locations,
)
from doikit.handle._protocol import (
    HTTP_STATUS,
    RC_AUTHENTICATION_NEEDED,
    RC_ERROR,
    RC_HANDLE_ALREADY_EXISTS,
    RC_HANDLE_NOT_FOUND,
    RC_INSUFFICIENT_PERMISSIONS,
    RC_INVALID_HANDLE,
    RC_INVALID_VALUE,
    RC_PROTOCOL_ERROR,
    RC_SUCCESS,
    RC_VALUES_NOT_FOUND,
    done_body,
    error_body,
    record_body,
    success_body,
)
from doikit.handle._values import (
    DEFAULT_PERMISSIONS,
    DEFAULT_TTL,
    AdminData,
    Data,
    HandleFormatError,
    HandleRecord,
    HandleValue,
    Reference,
    StructuredData,
    data_to_json,
    filter_values,
    format_time,
    loads,
    record_from_json,
    type_matches,
    value_from_json,
    value_to_json,
    values_from_json,
    values_to_json,
)

__all__ = [
    "AdminData",
    "DEFAULT_PERMISSIONS",
    "DEFAULT_TTL",
    "Data",
    "HTTP_STATUS",
    "HandleFormatError",
    "HandleRecord",
    "HandleValue",
    "Location",
    "Locations",
    "RC_AUTHENTICATION_NEEDED",
    "RC_ERROR",
    "RC_HANDLE_ALREADY_EXISTS",
    "RC_HANDLE_NOT_FOUND",
    "RC_INSUFFICIENT_PERMISSIONS",
    "RC_INVALID_HANDLE",
    "RC_INVALID_VALUE",
    "RC_PROTOCOL_ERROR",
    "RC_SUCCESS",
    "RC_VALUES_NOT_FOUND",
    "Reference",
    "StructuredData",
    "choose_location",
    "data_to_json",
    "done_body",
    "error_body",
    "filter_values",
    "format_time",
    "loads",
    "parse_locations",
    "record_body",
    "record_from_json",
    "success_body",
    "type_matches",
    "value_from_json",
    "value_to_json",
    "values_from_json",
    "values_to_json",
]
