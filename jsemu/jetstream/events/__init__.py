"""Every ``$JS.EVENT`` JetStream publishes: advisories and the API audit."""
