import TernPostgreSQL
import Testing

@Suite struct PostgreSQLLocationTests {
    @Test func urlWithSchema() throws {
        let location = try PostgreSQLLocation(
            "postgres://app@db.example.com:5433/recipes?sslmode=disable&schema=kitchen")
        #expect(location.schema == "kitchen")
        #expect(location.connectionInfo == "postgres://app@db.example.com:5433/recipes?sslmode=disable")
    }

    @Test func urlWithoutSchemaUsesTheServerDefault() throws {
        let location = try PostgreSQLLocation("postgresql://localhost/db")
        #expect(location.schema == nil)
        #expect(location.connectionInfo == "postgresql://localhost/db")
    }

    @Test func percentEncodedSchema() throws {
        let location = try PostgreSQLLocation("postgres://h/db?schema=a%20b%22c")
        #expect(location.schema == "a b\"c")
    }

    @Test func passwordIsHiddenInDescriptions() throws {
        let url = try PostgreSQLLocation("postgres://app:s3cret@h/db?schema=s")
        #expect(!url.description.contains("s3cret"))
        #expect(url.connectionInfo.contains("s3cret"))
        let pairs = try PostgreSQLLocation("host=h password='s3 cret' dbname=db")
        #expect(!pairs.description.contains("s3"))
    }

    @Test func keyValuePairsWithQuotesAndEscapes() throws {
        let location = try PostgreSQLLocation(#"host=/tmp/sock port = 5433 dbname='my db' user=o\'neil schema='it\'s'"#)
        #expect(location.schema == "it's")
        #expect(location.connectionInfo == #"host='/tmp/sock' port='5433' dbname='my db' user='o\'neil'"#)
        let again = try PostgreSQLLocation(#"host=/tmp dbname='a \'b\' c' schema='x y'"#)
        #expect(again.schema == "x y")
        #expect(again.connectionInfo == #"host='/tmp' dbname='a \'b\' c'"#)
    }

    @Test func malformedStringsAreRefused() {
        #expect(throws: PostgreSQLError.self) { try PostgreSQLLocation("host") }
        #expect(throws: PostgreSQLError.self) { try PostgreSQLLocation("dbname='open") }
    }

    @Test func urlsAreToldApartFromPaths() {
        #expect(PostgreSQLLocation.isURL("postgres://h/db"))
        #expect(PostgreSQLLocation.isURL("postgresql://h/db"))
        #expect(!PostgreSQLLocation.isURL("/tmp/store.sqlite"))
    }
}
