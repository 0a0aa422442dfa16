internal import CSQLite
import TernCore

/// A SQLite VFS that wraps the default one and lets the current task's ``FaultInjector`` fail
/// writes, syncs, truncations and deletions.
///
/// ``install()`` registers it once, as the default VFS, so every connection opened afterwards
/// goes through it; calls made outside ``FaultInjector/run(_:)`` are passed straight on. Each
/// file is the default VFS's own file object, placed after this VFS's header in the memory
/// SQLite allocates (``fileOffset``), and every method forwards to it.
enum SQLiteFaultVFS {
    /// Registers the VFS as the default one; later calls do nothing.
    static func install() { _ = installed }

    // MARK: - Non public

    /// The wrapped VFS, the shim, and its file methods, made and registered once.
    private struct Shim: @unchecked Sendable {
        // Written once, before registration, and only read afterwards (SQLite reads them under
        // its own mutex); the memory is never freed.
        let real: UnsafeMutablePointer<sqlite3_vfs>
        let vfs: UnsafeMutablePointer<sqlite3_vfs>
        let methods: UnsafeMutablePointer<sqlite3_io_methods>
    }

    /// Where the wrapped file starts in the memory of a shim file (after a `sqlite3_file`,
    /// rounded up to 16 bytes).
    private static let fileOffset = 16

    private static let shim: Shim? = {
        guard let real = sqlite3_vfs_find(nil) else { return nil }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: real.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.szOsFile = real.pointee.szOsFile + Int32(fileOffset)
        let name: StaticString = "tern-faults"
        vfs.pointee.zName = UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            guard let shim = SQLiteFaultVFS.shim, let file else { return SQLITE_ERROR }
            let inner = SQLiteFaultVFS.inner(file)
            file.pointee.pMethods = nil
            let code = shim.real.pointee.xOpen?(shim.real, name, inner, flags, outFlags) ?? SQLITE_ERROR
            if inner.pointee.pMethods != nil { file.pointee.pMethods = UnsafePointer(shim.methods) }
            return code
        }
        vfs.pointee.xDelete = { _, name, syncDirectory in
            guard let shim = SQLiteFaultVFS.shim else { return SQLITE_ERROR }
            if SQLiteFaultVFS.decide(.delete) != nil { return SQLITE_IOERR | (10 << 8) }  // SQLITE_IOERR_DELETE
            return shim.real.pointee.xDelete?(shim.real, name, syncDirectory) ?? SQLITE_ERROR
        }
        // The other VFS methods are the default VFS's own: they read nothing of the VFS but
        // its app data and path length, which were copied.
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: sqlite3_io_methods())
        methods.pointee.iVersion = 3
        methods.pointee.xClose = { file in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xClose?(inner) ?? SQLITE_OK
        }
        methods.pointee.xRead = { file, buffer, amount, offset in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xRead?(inner, buffer, amount, offset) ?? SQLITE_IOERR
        }
        methods.pointee.xWrite = { file, buffer, amount, offset in
            if let failure = SQLiteFaultVFS.decide(.write) {
                return failure == .diskFull ? SQLITE_FULL : SQLITE_IOERR | (3 << 8)  // SQLITE_IOERR_WRITE
            }
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xWrite?(inner, buffer, amount, offset) ?? SQLITE_IOERR
        }
        methods.pointee.xTruncate = { file, size in
            if let failure = SQLiteFaultVFS.decide(.truncate) {
                return failure == .diskFull ? SQLITE_FULL : SQLITE_IOERR | (6 << 8)  // SQLITE_IOERR_TRUNCATE
            }
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xTruncate?(inner, size) ?? SQLITE_IOERR
        }
        methods.pointee.xSync = { file, flags in
            if let failure = SQLiteFaultVFS.decide(.sync) {
                return failure == .diskFull ? SQLITE_FULL : SQLITE_IOERR | (4 << 8)  // SQLITE_IOERR_FSYNC
            }
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xSync?(inner, flags) ?? SQLITE_IOERR
        }
        methods.pointee.xFileSize = { file, size in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xFileSize?(inner, size) ?? SQLITE_IOERR
        }
        methods.pointee.xLock = { file, level in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xLock?(inner, level) ?? SQLITE_IOERR
        }
        methods.pointee.xUnlock = { file, level in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xUnlock?(inner, level) ?? SQLITE_IOERR
        }
        methods.pointee.xCheckReservedLock = { file, result in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xCheckReservedLock?(inner, result) ?? SQLITE_IOERR
        }
        methods.pointee.xFileControl = { file, operation, argument in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xFileControl?(inner, operation, argument) ?? SQLITE_NOTFOUND
        }
        methods.pointee.xSectorSize = { file in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xSectorSize?(inner) ?? 4096
        }
        methods.pointee.xDeviceCharacteristics = { file in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xDeviceCharacteristics?(inner) ?? 0
        }
        methods.pointee.xShmMap = { file, page, size, extend, region in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xShmMap?(inner, page, size, extend, region) ?? SQLITE_IOERR
        }
        methods.pointee.xShmLock = { file, offset, count, flags in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xShmLock?(inner, offset, count, flags) ?? SQLITE_IOERR
        }
        methods.pointee.xShmBarrier = { file in
            let inner = SQLiteFaultVFS.inner(file)
            inner.pointee.pMethods?.pointee.xShmBarrier?(inner)
        }
        methods.pointee.xShmUnmap = { file, delete in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xShmUnmap?(inner, delete) ?? SQLITE_OK
        }
        methods.pointee.xFetch = { file, offset, amount, pointer in
            let inner = SQLiteFaultVFS.inner(file)
            guard let fetch = inner.pointee.pMethods?.pointee.xFetch else {
                pointer?.pointee = nil
                return SQLITE_OK
            }
            return fetch(inner, offset, amount, pointer)
        }
        methods.pointee.xUnfetch = { file, offset, pointer in
            let inner = SQLiteFaultVFS.inner(file)
            return inner.pointee.pMethods?.pointee.xUnfetch?(inner, offset, pointer) ?? SQLITE_OK
        }
        return Shim(real: real, vfs: vfs, methods: methods)
    }()

    private static let installed: Bool = {
        guard let shim else { return false }
        return sqlite3_vfs_register(shim.vfs, 1) == SQLITE_OK
    }()

    /// The wrapped VFS's file inside a shim file.
    private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        // SQLite never calls a file method without its file.
        UnsafeMutableRawPointer(file.unsafelyUnwrapped).advanced(by: fileOffset).assumingMemoryBound(
            to: sqlite3_file.self)
    }

    /// The current task's injector's decision about a call, if an injector runs.
    private static func decide(_ kind: FaultInjector.Kinds) -> FaultInjector.Failure? {
        (FileOperationsScope.current as? FaultInjector)?.decide(kind)
    }
}
