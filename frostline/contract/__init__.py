"""The revision contract over stored records: identities and callsites, the
occurrence ledger, the frozen prefix and rebinding (`rebind`), the gate, certificates, waits,
orphans and the status enums with their one exit/HTTP table (`status`)."""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
