"""The request and response models of the API: what travels on the wire, for the server
and the SDK alike. Imports nothing of Hindsight but `limits`, so the SDK ships it whole."""
