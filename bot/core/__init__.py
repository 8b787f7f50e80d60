"""Types, DTOs and errors of Countersign: no I/O here."""
